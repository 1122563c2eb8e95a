// kiln bench PLAN | --onnx MODEL: latency and throughput of a plan, in the manner of trtexec.
// Options are bench_options', the loops bench_loop's, the output bench_report's; this file joins
// them: load or build the plan, bind random inputs on every stream, time, profile, report.
#include <unistd.h>

#include <cstdio>
#include <random>

#include "bench_loop.h"
#include "bench_options.h"
#include "bench_report.h"
#include "cli_common.h"
#include "commands.h"
#include "inference.h"
#include "kiln/registry.h"
#include "onnx_model.h"

namespace kiln::cli {
namespace {

// Items per inference: --batch-items, else the first dimension of the first input.
void batchItems(const IEngine& engine, const BenchOptions& options, BenchReport& report) {
  if (options.batchItems > 0) {
    report.batchItems = options.batchItems;
    report.batchFrom = "--batch-items";
    return;
  }
  report.batchItems = 1;
  report.batchFrom = "the plan has no inputs";
  for (int32_t i = 0; i < engine.getNbIOTensors(); ++i) {
    const char* name = engine.getIOTensorName(i);
    if (engine.getTensorIOMode(name) != TensorIOMode::kINPUT) continue;
    const Dims dims = engine.getTensorDesc(name).dims;
    if (dims.nbDims >= 1 && dims.d[0] >= 1) {
      report.batchItems = dims.d[0];
      report.batchFrom = std::string("dim 0 of input '") + name + "'";
    } else {
      report.batchFrom = std::string("input '") + name + "' is a scalar or empty";
    }
    return;
  }
}

Status bench(const Args& args) {
  BenchOptions options;
  KILN_RETURN_IF_ERROR(benchOptionsFromArgs(args, options));
  KILN_RETURN_IF_ERROR(setUpTraceAndLogging(args));
  KILN_RETURN_IF_ERROR(setUpPlugins(args));
  std::vector<uint8_t> bytes;
  std::string source;
  KILN_RETURN_IF_ERROR(
      planFromArgs(args, "usage: kiln bench PLAN [options], or kiln bench --onnx MODEL [options]",
                   bytes, source));

  std::unique_ptr<IEngine> engine;
  KILN_RETURN_IF_ERROR(createRuntime()
                           ->deserializeEngine(bytes.data(), bytes.size(), engine)
                           .withContext("loading plan '" + source + "'"));
  const IDevice& device = engine->getDevice();

  // Random inputs (never zeros for floats), the same on every stream; integer inputs 0, as in
  // `kiln run`, since they are usually indices.
  const unsigned seed = options.seedGiven ? options.seed : std::random_device{}();
  std::vector<HostTensor> inputs;
  ShapeArgs shapes;
  KILN_RETURN_IF_ERROR(shapesFromArgs(args, shapes));
  KILN_RETURN_IF_ERROR(prepareInputs(*engine, {}, seed, inputs, shapes.fixed));
  std::vector<BoundContext> contexts(options.streams);
  for (int s = 0; s < options.streams; ++s) {
    KILN_RETURN_IF_ERROR(
        bindContext(*engine, inputs, contexts[s]).withContext("stream " + std::to_string(s)));
  }

  BenchReport report;
  report.plan = source;
  report.target = engine->getTarget();
  report.device = device.getKind() == DeviceKind::kCUDA
                      ? "cuda:" + std::to_string(device.getIndex())
                      : std::string("cpu");
  report.deviceEvents = device.getKind() == DeviceKind::kCUDA;
  report.streams = options.streams;
  report.cudaGraph = options.cudaGraph;
  batchItems(*engine, options, report);
  const EngineMemory memory = engine->getMemory();
  report.weightBytes = memory.weightBytes;
  report.contextBytes = memory.contextBytes;

  // The progress line rewrites itself on a terminal; logs get nothing.
  const bool terminal = options.progress && isatty(STDERR_FILENO);
  BenchProgress progress;
  if (terminal) {
    progress = [&](double elapsedS, int64_t inferences) {
      std::fprintf(stderr, "\r%s", progressLine(elapsedS, options.durationS, inferences).c_str());
      std::fflush(stderr);
    };
  }
  TimedRuns runs;
  const Status timed = timeContexts(*engine, contexts, options, progress, runs);
  if (terminal) std::fputs("\r\033[K", stderr);  // clear the progress line
  KILN_RETURN_IF_ERROR(timed);
  report.warmupMs = runs.warmupMs;
  report.warmupInferences = runs.warmupInferences;
  report.wallMs = runs.wallMs;
  report.engineGraphs = runs.engineGraphs;
  report.inferences = static_cast<int64_t>(runs.enqueueMs.size());
  report.latency = summarize(runs.latencyMs);
  report.enqueue = summarize(runs.enqueueMs);

  ProfiledRuns profiled;
  if (options.profile) {
    KILN_RETURN_IF_ERROR(profileContext(contexts[0], options.profileRuns, profiled));
    report.profiled = true;
    report.profileRuns = options.profileRuns;
    report.layers = summarizeLayers(profiled.layers);
  }

  std::fputs(reportText(report).c_str(), stdout);
  if (!options.jsonPath.empty()) {
    const std::string json = reportJson(report);
    KILN_RETURN_IF_ERROR(writeFile(options.jsonPath, json.data(), json.size()));
    std::printf("wrote %s\n", options.jsonPath.c_str());
  }
  if (!options.chromeTracePath.empty()) {
    const std::string trace = chromeTrace(report, profiled.layers, profiled.runStartMs);
    KILN_RETURN_IF_ERROR(writeFile(options.chromeTracePath, trace.data(), trace.size()));
    std::printf("wrote %s (open in chrome://tracing or ui.perfetto.dev)\n",
                options.chromeTracePath.c_str());
  }
  flushTrace();
  return Status::ok();
}

}  // namespace

int benchCommand(int argc, char** argv) {
  Args args;
  Status s = parseArgs(argc, argv, 2, benchValueOptions(), benchFlags(), args);
  if (s) s = bench(args);
  return s ? 0 : fail("bench", s);
}

}  // namespace kiln::cli
