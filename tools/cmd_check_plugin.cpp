// kiln check-plugin: run the plugin conformance harness (include/kiln/plugin_check.h) on one
// plugin from the command line and print its pass/fail table. Exit status 0 iff every check
// passed (skipped rows, e.g. CUDA on a machine without a GPU, do not fail it).
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "kiln/logger.h"
#include "kiln/plugin_check.h"
#include "kiln/registry.h"

namespace kiln::cli {
namespace {

constexpr const char* kUsage =
    "usage: kiln check-plugin --plugin NAME[:VERSION[:NAMESPACE]] --input "
    "SHAPE[:TYPE[:LOW:HIGH]]...\n"
    "                         [--plugins LIB]... [--field NAME=VALUE]... [--device "
    "cpu|cuda[:N]|all]\n"
    "                         [--contexts N] [--iterations N] [--max-combinations N] [--seed N]\n"
    "                         [--tolerance KIND=ABS[:REL]]... [--no-empty] [--trace PATH] "
    "[--verbose]\n"
    "                         [--profile MIN:MAX]... [--dim-name INPUT.AXIS=NAME]... "
    "[--profile-shapes N]\n"
    "  --plugin    the plugin as registered (version defaults to 1, namespace to \"\")\n"
    "  --field     a creator field, read in the type the creator lists for it (lists: 1,2,3;\n"
    "              dims: 2x3x4)\n"
    "  --input     one plugin input per flag, in order: SHAPE as 2x16x20x24, TYPE fp32 (default),\n"
    "              fp16, bf16, int8, int32, int64 or bool, random values in [LOW, HIGH)\n"
    "              (default [-1, 1) for floats, [0, 1) for integers: e.g. 10:int32:0:2 for\n"
    "              indices into 2 images)\n"
    "  --device    cpu (default), cuda, cuda:N, or all (cpu and cuda:0)\n"
    "  --tolerance agreement tolerance; KIND fp32, fp16, bf16 (combinations by their narrowest\n"
    "              type, and CUDA vs CPU) or reference (defaults 1e-5:1e-5, 3e-2:1e-2, 2e-1:5e-2,\n"
    "              1e-5:1e-5)\n"
    "  --trace     keep the lifecycle trace of the run in PATH\n"
    "  --profile   the dynamic form: one per --input, in order, the min and max shapes of an\n"
    "              optimization profile (the --input shape is its opt), e.g. 1x3x9x11:3x3x9x11;\n"
    "              the plugin is built once for the range and run at min, opt, max and\n"
    "              --profile-shapes random shapes (default 3), each against a static plan\n"
    "  --dim-name  axes that must be equal share a name: 1.0=K 2.0=K (boxes and box_indices)\n";

Status parseDims(const std::string& text, Dims& dims) {
  dims = Dims();
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (...) {
    }
    if (part.empty() || used != part.size() || v < 0 || dims.nbDims == Dims::kMaxDims)
      return invalidArgument("bad shape '" + text + "': write dims as 2x16x20x24 (at most 8)");
    dims.d[dims.nbDims++] = v;
    if (x == std::string::npos) break;
    start = x + 1;
  }
  return Status::ok();
}

Status parseType(const std::string& name, DataType& type) {
  for (int32_t t = 0; t < kDataTypeCount; ++t) {
    if (name == dataTypeName(static_cast<DataType>(t))) {
      type = static_cast<DataType>(t);
      return Status::ok();
    }
  }
  if (name == "float" || name == "float32") {
    type = DataType::kFLOAT;
    return Status::ok();
  }
  return invalidArgument("unknown type '" + name +
                         "' (fp32, fp16, bf16, int8, int32, int64 or bool)");
}

Status parseInput(const std::string& text, PluginCheckInput& input) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t c = text.find(':', start);
    parts.push_back(text.substr(start, c == std::string::npos ? c : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() != 1 && parts.size() != 2 && parts.size() != 4)
    return invalidArgument("--input expects SHAPE[:TYPE[:LOW:HIGH]], got '" + text + "'");
  KILN_RETURN_IF_ERROR(parseDims(parts[0], input.dims));
  input.type = DataType::kFLOAT;
  if (parts.size() >= 2) KILN_RETURN_IF_ERROR(parseType(parts[1], input.type));
  input.low = isFloatType(input.type) ? -1.0 : 0.0;
  input.high = 1.0;
  if (parts.size() == 4) {
    try {
      size_t a = 0, b = 0;
      input.low = std::stod(parts[2], &a);
      input.high = std::stod(parts[3], &b);
      if (a != parts[2].size() || b != parts[3].size()) throw 0;
    } catch (...) {
      return invalidArgument("--input '" + text + "': LOW and HIGH must be numbers");
    }
    if (!(input.low < input.high))
      return invalidArgument("--input '" + text + "': LOW must be below HIGH");
  }
  return Status::ok();
}

Status parseTolerance(const std::string& text, PluginCheckSpec& spec) {
  const size_t eq = text.find('=');
  const std::string kind = text.substr(0, eq);
  PluginCheckTolerance* target = kind == "fp32"        ? &spec.fp32Tolerance
                                 : kind == "fp16"      ? &spec.fp16Tolerance
                                 : kind == "bf16"      ? &spec.bf16Tolerance
                                 : kind == "reference" ? &spec.referenceTolerance
                                                       : nullptr;
  if (!target || eq == std::string::npos)
    return invalidArgument("--tolerance expects fp32|fp16|bf16|reference=ABS[:REL], got '" + text +
                           "'");
  const std::string value = text.substr(eq + 1);
  const size_t colon = value.find(':');
  try {
    size_t used = 0;
    const std::string a = value.substr(0, colon);
    target->abs = std::stod(a, &used);
    if (used != a.size()) throw 0;
    if (colon != std::string::npos) {
      const std::string r = value.substr(colon + 1);
      target->rel = std::stod(r, &used);
      if (used != r.size()) throw 0;
    }
  } catch (...) {
    return invalidArgument("--tolerance '" + text + "': ABS and REL must be numbers");
  }
  return Status::ok();
}

Status parseCount(const Args& args, const char* name, int low, int high, int& value);

// --profile MIN:MAX (one per --input), --dim-name INPUT.AXIS=NAME, --profile-shapes N.
Status parseProfile(const Args& args, PluginCheckSpec& spec) {
  const std::vector<std::string> ranges = args.all("profile");
  if (ranges.empty()) {
    if (args.has("dim-name") || args.has("profile-shapes"))
      return invalidArgument("--dim-name and --profile-shapes need --profile");
    return Status::ok();
  }
  if (ranges.size() != spec.inputs.size())
    return invalidArgument("--profile: give one MIN:MAX per --input (" +
                           std::to_string(spec.inputs.size()) + "), got " +
                           std::to_string(ranges.size()));
  for (const std::string& r : ranges) {
    const size_t colon = r.find(':');
    if (colon == std::string::npos)
      return invalidArgument("--profile expects MIN:MAX shapes, got '" + r + "'");
    Dims lo, hi;
    KILN_RETURN_IF_ERROR(parseDims(r.substr(0, colon), lo));
    KILN_RETURN_IF_ERROR(parseDims(r.substr(colon + 1), hi));
    spec.profileMin.push_back(lo);
    spec.profileMax.push_back(hi);
  }
  spec.profileDimNames.assign(spec.inputs.size(), {});
  for (const std::string& n : args.all("dim-name")) {
    const size_t dot = n.find('.'), eq = n.find('=');
    int input = -1, axis = -1;
    try {
      size_t a = 0, b = 0;
      input = std::stoi(n.substr(0, dot), &a);
      axis = std::stoi(n.substr(dot + 1, eq - dot - 1), &b);
      if (dot == std::string::npos || eq == std::string::npos || a != dot || b != eq - dot - 1)
        throw 0;
    } catch (...) {
      input = -1;
    }
    if (input < 0 || input >= static_cast<int>(spec.inputs.size()) || axis < 0 ||
        axis >= spec.inputs[static_cast<size_t>(input)].dims.nbDims || eq + 1 >= n.size())
      return invalidArgument(
          "--dim-name expects INPUT.AXIS=NAME with an existing input and axis, "
          "got '" +
          n + "'");
    auto& names = spec.profileDimNames[static_cast<size_t>(input)];
    names.resize(static_cast<size_t>(spec.inputs[static_cast<size_t>(input)].dims.nbDims));
    names[static_cast<size_t>(axis)] = n.substr(eq + 1);
  }
  return parseCount(args, "profile-shapes", 0, 1000, spec.profileRandomShapes);
}

Status parseCount(const Args& args, const char* name, int low, int high, int& value) {
  if (!args.has(name)) return Status::ok();
  try {
    size_t used = 0;
    const std::string text = args.get(name);
    value = std::stoi(text, &used);
    if (used != text.size()) throw 0;
  } catch (...) {
    value = low - 1;
  }
  if (value < low || value > high)
    return invalidArgument(std::string("--") + name + " takes a whole number in " +
                           std::to_string(low) + ".." + std::to_string(high));
  return Status::ok();
}

Status checkPlugin(const Args& args, bool& allPassed) {
  if (!args.positional.empty() || !args.has("plugin") || !args.has("input"))
    return invalidArgument(std::string("--plugin and at least one --input are required\n") +
                           kUsage);
  if (args.has("verbose"))
    setLogSeverity(Severity::kInfo);
  else
    setLogSeverity(Severity::kError);  // the table says what failed
  KILN_RETURN_IF_ERROR(setUpPlugins(args));

  PluginCheckSpec spec;
  const std::string id = args.get("plugin");
  const size_t c1 = id.find(':');
  spec.name = id.substr(0, c1);
  if (c1 != std::string::npos) {
    const size_t c2 = id.find(':', c1 + 1);
    spec.version = id.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1);
    if (c2 != std::string::npos) spec.pluginNamespace = id.substr(c2 + 1);
  }
  if (spec.name.empty() || spec.version.empty())
    return invalidArgument("--plugin expects NAME[:VERSION[:NAMESPACE]], got '" + id + "'");
  IPluginCreator* creator = PluginRegistry::global().getCreator(
      spec.name.c_str(), spec.version.c_str(), spec.pluginNamespace.c_str());
  if (!creator) {
    std::string known;
    for (const PluginCreatorInfo& info : PluginRegistry::global().listCreators())
      known += "\n  " + info.name + ":" + info.version + ":" + info.pluginNamespace +
               (info.libraryName.empty() ? "" : " (" + info.libraryName + ")");
    return notFound("no plugin " + spec.name + " version " + spec.version + " namespace '" +
                    spec.pluginNamespace + "' is registered (load its library with --plugins " +
                    "LIB); registered:" + (known.empty() ? " none" : known));
  }
  for (const std::string& f : args.all("field")) {
    PluginCheckField field;
    std::string error;
    if (!parsePluginCheckField(*creator, f, field, error))
      return invalidArgument("--field " + f + ": " + error);
    spec.fields.push_back(std::move(field));
  }
  for (const std::string& in : args.all("input")) {
    PluginCheckInput input;
    KILN_RETURN_IF_ERROR(parseInput(in, input));
    spec.inputs.push_back(std::move(input));
  }
  const std::string device = args.get("device", "cpu");
  if (device == "all")
    spec.devices = {"cpu", "cuda:0"};
  else if (device == "cuda")
    spec.devices = {"cuda:0"};
  else if (device == "cpu" || device.rfind("cuda:", 0) == 0)
    spec.devices = {device};
  else
    return invalidArgument("--device takes cpu, cuda, cuda:N or all, got '" + device + "'");
  KILN_RETURN_IF_ERROR(parseCount(args, "contexts", 1, 256, spec.contexts));
  KILN_RETURN_IF_ERROR(parseCount(args, "iterations", 1, 100000, spec.iterations));
  KILN_RETURN_IF_ERROR(parseCount(args, "max-combinations", 1, 4096, spec.maxCombinations));
  if (args.has("seed")) {
    try {
      spec.seed = std::stoull(args.get("seed"));
    } catch (...) {
      return invalidArgument("--seed takes a whole number");
    }
  }
  for (const std::string& t : args.all("tolerance")) KILN_RETURN_IF_ERROR(parseTolerance(t, spec));
  KILN_RETURN_IF_ERROR(parseProfile(args, spec));
  spec.checkEmptyTensors = !args.has("no-empty");
  spec.tracePath = args.get("trace");

  PluginCheckReport report = runPluginCheck(spec);
  report.print(std::cout);
  std::cout.flush();
  allPassed = report.allPassed();
  return Status::ok();
}

}  // namespace

int checkPluginCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(
      argc, argv, 2,
      {"plugins", "plugin", "field", "input", "device", "contexts", "iterations",
       "max-combinations", "seed", "trace", "tolerance", "profile", "dim-name", "profile-shapes"},
      {"no-empty", "verbose", "help"}, args);
  if (s && args.has("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  bool allPassed = false;
  if (s) s = checkPlugin(args, allPassed);
  if (!s) return fail("check-plugin", s);
  if (!allPassed) std::fprintf(stderr, "kiln check-plugin: some checks failed (see FAIL rows)\n");
  return allPassed ? 0 : 1;
}

}  // namespace kiln::cli
