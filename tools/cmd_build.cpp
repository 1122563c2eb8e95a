// kiln build --onnx MODEL --save PLAN: parse an ONNX model, build it and write the plan.
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "kiln/registry.h"
#include "onnx_model.h"

namespace kiln::cli {
namespace {

Status build(const Args& args) {
  if (!args.positional.empty() || !args.has("onnx") || !args.has("save"))
    return invalidArgument(
        "usage: kiln build --onnx MODEL --save PLAN [--device cpu|cuda[:N]] [--fp16] "
        "[--shapes NAME:DIMS | NAME:MIN,OPT,MAX ...] [--minShapes/--optShapes/--maxShapes "
        "NAME:DIMS,...] [--plugins LIB] [--verbose]");
  KILN_RETURN_IF_ERROR(setUpTraceAndLogging(args));
  KILN_RETURN_IF_ERROR(setUpPlugins(args));
  BuilderConfig config;
  KILN_RETURN_IF_ERROR(builderConfigFromArgs(args, config));
  std::vector<uint8_t> plan;
  ShapeArgs shapes;
  KILN_RETURN_IF_ERROR(shapesFromArgs(args, shapes));
  KILN_RETURN_IF_ERROR(buildOnnxPlan(args.get("onnx"), config, plan, shapes));
  KILN_RETURN_IF_ERROR(writeFile(args.get("save"), plan.data(), plan.size()));
  std::printf(
      "built %s: %zu bytes%s\n", args.get("save").c_str(), plan.size(),
      shapes.profiles.empty()
          ? ""
          : (", " + std::to_string(shapes.profiles.size()) + " optimization profile(s)").c_str());
  flushTrace();
  return Status::ok();
}

}  // namespace

int buildCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(argc, argv, 2,
                       {"onnx", "save", "plugins", "trace", "device", "shapes", "shape-values",
                        "minShapes", "optShapes", "maxShapes", "timing-cache"},
                       {"verbose", "fp16"}, args);
  if (s) s = build(args);
  return s ? 0 : fail("build", s);
}

}  // namespace kiln::cli
