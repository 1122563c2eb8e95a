// `kiln bench` options: what the command line says, checked, with trtexec's defaults where
// trtexec has the same option (warm-up 200 ms; at least 10 inferences and 3 s of timed runs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli_common.h"

namespace kiln::cli {

struct BenchOptions {
  double warmupMs = 200;    // --warmup-ms: untimed runs on every stream first, for at least this
  int64_t iterations = 10;  // --iterations: at least this many timed inferences per stream
  double durationS = 3;     // --duration: and for at least this many seconds
  bool cudaGraph = false;   // --cuda-graph: capture each context's enqueue once, then replay it
  // --engine-graphs: each context keeps its own CUDA graphs (IExecutionContext::setCudaGraphs),
  // so the timed enqueue is the engine's replay path, host checks included; --layer-by-layer:
  // none (setCudaGraphs(false)); neither: the engine's default (graphs for plugin-free CUDA plans)
  bool engineGraphs = false;
  bool layerByLayer = false;
  int streams = 1;              // --streams: contexts, each on its own stream and host thread
  bool profile = false;         // --profile (implied by --chrome-trace): per-layer times
  int profileRuns = 20;         // --profile-runs: profiled inferences after the timed ones
  std::string jsonPath;         // --json FILE: the whole report as JSON
  std::string chromeTracePath;  // --chrome-trace FILE: the profiled runs for chrome://tracing
  int64_t batchItems = 0;       // --batch-items: items per inference; 0 = first input's dim 0
  bool seedGiven = false;       // --seed: random inputs that are the same from run to run
  unsigned seed = 0;
  bool progress = true;  // --no-progress turns off the progress line of long runs
};

// The options `kiln bench` accepts (for parseArgs), beyond PLAN.
const std::vector<std::string>& benchValueOptions();
const std::vector<std::string>& benchFlags();

// Reads and checks the bench options in `args`; the error names the option and what it takes.
// (PLAN / --onnx, --device and --fp16 are planFromArgs's.)
Status benchOptionsFromArgs(const Args& args, BenchOptions& options);

}  // namespace kiln::cli
