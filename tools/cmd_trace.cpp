// kiln trace FILE: render a lifecycle trace, then check it against guarantees 1-9.
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "plugin/trace_checker.h"
#include "plugin/trace_render.h"

namespace kiln::cli {

// Prints the rendered trace and the checker's verdict; false if the trace breaks a guarantee.
bool printTraceReport(const std::vector<std::string>& lines, Status& status) {
  const std::string text = renderTrace(lines, status);
  if (!status) return false;
  std::fputs(text.c_str(), stdout);
  std::vector<TraceViolation> violations;
  status = checkTrace(lines, violations);
  if (!status) return false;
  if (violations.empty()) {
    std::printf("checked %zu calls: guarantees 1-9 hold\n", lines.size());
    return true;
  }
  for (const TraceViolation& v : violations)
    std::printf("VIOLATION %s\n", formatTraceViolation(v).c_str());
  status = internalError(std::to_string(violations.size()) + " lifecycle violation(s)");
  return false;
}

int traceCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(argc, argv, 2, {}, {}, args);
  if (s && args.positional.size() != 1) s = invalidArgument("usage: kiln trace FILE");
  std::vector<std::string> lines;
  if (s) s = readTraceFile(args.positional[0], lines);
  if (s) printTraceReport(lines, s);
  return s ? 0 : fail("trace", s);
}

}  // namespace kiln::cli
