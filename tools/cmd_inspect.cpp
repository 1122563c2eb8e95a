// kiln inspect PLAN: the plan as JSON. Needs no plugins: it reads the plan, not an engine.
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "kiln/runtime.h"

namespace kiln::cli {

int inspectCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(argc, argv, 2, {}, {}, args);
  if (s && args.positional.size() != 1) s = invalidArgument("usage: kiln inspect PLAN");
  std::vector<uint8_t> bytes;
  if (s) s = readFile(args.positional[0], bytes);
  std::string json;
  if (s)
    s = inspectPlan(bytes.data(), bytes.size(), json)
            .withContext("plan '" + args.positional[0] + "'");
  if (!s) return fail("inspect", s);
  std::fputs(json.c_str(), stdout);
  return 0;
}

}  // namespace kiln::cli
