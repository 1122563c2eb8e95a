// kiln demo --out DIR: the whole flow on the bundled detector, traced and checked.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli_common.h"
#include "commands.h"
#include "demo_network.h"
#include "inference.h"
#include "kiln/builder.h"
#include "kiln/logger.h"
#include "kiln/registry.h"
#include "plugin/trace_checker.h"

namespace kiln::cli {

bool printTraceReport(const std::vector<std::string>& lines, Status& status);

namespace {

HostTensor hostTensor(const char* name, DataType type, Dims dims, const void* data, size_t bytes) {
  HostTensor t;
  t.name = name;
  t.desc.dims = dims;
  t.desc.type = type;
  t.data.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
  return t;
}

// Build: network -> plan bytes -> file (the network and its plugin definition objects are gone
// before the plan is loaded, as in a real deployment); then load it in a fresh runtime and run
// two contexts at once.
Status buildAndRun(const BuilderConfig& config, const std::string& planPath,
                   std::vector<HostTensor>& outputs) {
  {
    Status status;
    auto network = demo::buildDemoNetwork(status);
    if (!network) return status.withContext("building the demo network");
    std::vector<uint8_t> plan;
    KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(*network, config, plan));
    KILN_RETURN_IF_ERROR(writeFile(planPath, plan.data(), plan.size()));
    std::printf("built %s for %s (%zu bytes)\n", planPath.c_str(), config.target.c_str(),
                plan.size());
  }
  std::vector<uint8_t> bytes;
  KILN_RETURN_IF_ERROR(readFile(planPath, bytes));
  auto runtime = createRuntime();
  std::unique_ptr<IEngine> engine;
  KILN_RETURN_IF_ERROR(runtime->deserializeEngine(bytes.data(), bytes.size(), engine));
  const demo::DemoInputs in = demo::makeDemoInputs();
  std::map<std::string, HostTensor> given;
  given["image"] =
      hostTensor("image", DataType::kFLOAT, makeDims({1, 3, demo::kImageSize, demo::kImageSize}),
                 in.image.data(), in.image.size() * 4);
  given["boxes"] = hostTensor("boxes", DataType::kFLOAT, makeDims({demo::kBoxes, 4}),
                              in.boxes.data(), in.boxes.size() * 4);
  given["box_indices"] = hostTensor("box_indices", DataType::kINT32, makeDims({demo::kBoxes}),
                                    in.boxIndices.data(), in.boxIndices.size() * 4);
  std::vector<HostTensor> inputs;
  KILN_RETURN_IF_ERROR(prepareInputs(*engine, std::move(given), 0, inputs));
  return runContexts(*engine, inputs, 2, 3, outputs);
}

// On CUDA the same network also runs on the CPU backend; the scores must agree to FP32
// rounding (FP16 builds: to FP16's precision).
Status compareWithCpu(const BuilderConfig& gpuConfig, const std::string& dir,
                      const std::vector<HostTensor>& gpuOutputs) {
  std::vector<HostTensor> cpuOutputs;
  KILN_RETURN_IF_ERROR(buildAndRun(BuilderConfig(), dir + "/demo_cpu.plan", cpuOutputs));
  const std::vector<float> gpu = asFloats(gpuOutputs.at(0)), cpu = asFloats(cpuOutputs.at(0));
  if (gpu.size() != cpu.size()) return internalError("CPU and CUDA outputs differ in size");
  const double tolerance = gpuConfig.builtinHalf ? 2e-2 : 1e-4;
  double worst = 0;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const double diff = std::fabs(double(gpu[i]) - cpu[i]) / (std::fabs(double(cpu[i])) + 1e-3);
    if (!(diff <= worst)) worst = diff;  // NaN propagates as the worst
  }
  std::printf("CUDA vs CPU backend: worst relative difference %.3g (allowed %.0e)\n", worst,
              tolerance);
  if (!(worst <= tolerance)) {
    return internalError("the CUDA outputs differ from the CPU backend's by " +
                         std::to_string(worst) + " (relative)");
  }
  return Status::ok();
}

Status demo(const Args& args) {
  const std::string dir = args.get("out");
  if (dir.empty()) return invalidArgument("usage: kiln demo --out DIR");
  KILN_RETURN_IF_ERROR(makeDirectories(dir));
  const std::string planPath = dir + "/demo.plan", tracePath = dir + "/trace.jsonl";
  KILN_RETURN_IF_ERROR(setTracePath(tracePath));
  if (args.has("verbose")) setLogSeverity(Severity::kInfo);
  KILN_RETURN_IF_ERROR(setUpPlugins(args));

  BuilderConfig config;
  KILN_RETURN_IF_ERROR(builderConfigFromArgs(args, config));
  std::vector<HostTensor> outputs;
  KILN_RETURN_IF_ERROR(buildAndRun(config, planPath, outputs));
  flushTrace();
  KILN_RETURN_IF_ERROR(setTracePath(""));

  std::printf("loaded it in a fresh runtime; 2 contexts on 2 threads agree bit for bit\n\n");
  const std::vector<float> scores = asFloats(outputs.at(0));
  std::printf("per-box class scores (%s):\n     ", outputs[0].name.c_str());
  for (int c = 0; c < demo::kClasses; ++c) std::printf("  class%d", c);
  std::printf("\n");
  for (int b = 0; b < demo::kBoxes; ++b) {
    std::printf("box%d ", b);
    for (int c = 0; c < demo::kClasses; ++c) std::printf("  %6.4f", scores[b * demo::kClasses + c]);
    std::printf("\n");
  }
  std::printf("\nplugin lifecycle (%s):\n", tracePath.c_str());
  std::vector<std::string> lines;
  KILN_RETURN_IF_ERROR(readTraceFile(tracePath, lines));
  Status status;
  printTraceReport(lines, status);
  if (status && config.target != "cpu") KILN_RETURN_IF_ERROR(compareWithCpu(config, dir, outputs));
  return status;
}

}  // namespace

int demoCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(argc, argv, 2, {"out", "plugins", "device"}, {"verbose", "fp16"}, args);
  if (s && !args.positional.empty()) s = invalidArgument("usage: kiln demo --out DIR");
  if (s) s = demo(args);
  return s ? 0 : fail("demo", s);
}

}  // namespace kiln::cli
