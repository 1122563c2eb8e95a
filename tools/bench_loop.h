// The timing loops of `kiln bench`: bound contexts run concurrently, one host thread and one
// stream each, after a warm-up; each inference is timed with a pair of device events (CUDA events;
// the CPU backend's steady clock) and its host enqueue with the steady clock. Then, optionally,
// profiled runs of one context give per-layer times.
#pragma once

#include <functional>
#include <vector>

#include "bench_options.h"
#include "bench_stats.h"
#include "inference.h"

namespace kiln::cli {

struct TimedRuns {
  std::vector<double> latencyMs;  // per timed inference, every stream: its device events
  std::vector<double> enqueueMs;  // per timed inference: the host's enqueue() or graph launch
  std::vector<int64_t> inferencesPerStream;
  int64_t warmupInferences = 0;  // all streams
  double warmupMs = 0;           // the longest stream's warm-up
  // From the common start of the timed runs to the end of the last stream's last inference.
  double wallMs = 0;
  // Whether every context replayed its own CUDA graphs in the timed runs (--engine-graphs, or the
  // engine's default for plugin-free CUDA plans) rather than running layer by layer.
  bool engineGraphs = false;
};

// Called about once a second from the first stream's thread while the timed runs last.
using BenchProgress = std::function<void(double elapsedS, int64_t inferences)>;

// Runs warm-up then timed inferences on every context at once, as `options` says (--warmup-ms,
// --iterations, --duration, --cuda-graph). The contexts must be on `engine`.
Status timeContexts(IEngine& engine, std::vector<BoundContext>& contexts,
                    const BenchOptions& options, const BenchProgress& progress, TimedRuns& runs);

struct ProfiledRuns {
  std::vector<LayerSample> layers;  // every layer of every profiled run, in order
  std::vector<double> runStartMs;   // per run, when its enqueue began (host clock, from the first)
};

// `runs` profiled enqueues of one context (never in a CUDA graph: a profiled enqueue waits for
// its events); the profiler is removed again afterwards.
Status profileContext(BoundContext& context, int runs, ProfiledRuns& profiled);

}  // namespace kiln::cli
