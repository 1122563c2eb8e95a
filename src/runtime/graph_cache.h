// The CUDA graphs an execution context keeps (IExecutionContext::setCudaGraphs): one per key
// (profile, input dims, I/O addresses, arena and workspace: what a graph bakes in), most recently
// used first, at most kMaxGraphs. The first enqueue of a key runs layer by layer, so that kernels
// that set themselves up lazily do it outside any capture; the second captures and launches;
// later ones only launch. A key whose capture failed runs layer by layer from then on (logged
// once). Graphs the context keeps by default (automatic: plugin-free CUDA plans) stop where they
// do not pay: see keepsPaying.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "kiln/runtime.h"

namespace kiln {

class GraphCache {
 public:
  static constexpr size_t kMaxGraphs = 8;
  // Automatic graphs give up once more graphs were captured than the cache holds (keys were
  // dropped and made again) while each capture was launched fewer than this many times: a
  // caller whose shapes or addresses keep changing would pay a capture (about a millisecond of
  // host time for a ResNet-50) for little or nothing back.
  static constexpr int64_t kLaunchesPerCaptureToKeep = 4;
  static bool keepsPaying(const CudaGraphStats& stats) {
    return stats.captured <= static_cast<int64_t>(kMaxGraphs) ||
           stats.replayed >= kLaunchesPerCaptureToKeep * stats.captured;
  }

  // Made at context creation with the length of its keys, so that seeing a new key allocates
  // nothing: only a capture does (the graph, inside the CUDA driver).
  explicit GraphCache(size_t keyLength = 0);

  // One enqueue of `key` on `stream`: `runSteps()` enqueues the layers (directly, or into the
  // capture), `beforeLaunch()` runs before a graph is launched, and `keep` is held with a captured
  // graph for as long as it lives (the kernels it launches).
  Status enqueue(const Backend& backend, Stream stream, const std::vector<uint64_t>& key,
                 std::shared_ptr<const void> keep, const std::function<Status()>& runSteps,
                 const std::function<Status()>& beforeLaunch);
  // An enqueue that ran layer by layer without asking (stream 0, a profiler).
  void countDirect() { ++stats_.direct; }
  void clear();
  CudaGraphStats stats() const;

 private:
  struct Entry {
    std::vector<uint64_t> key;
    std::shared_ptr<const void> keep;     // declared first: outlives the graph that launches it
    std::unique_ptr<IDeviceGraph> graph;  // null until the key is seen a second time
    bool failed = false;                  // capture failed: layer by layer
    void reset();                         // empty, its key buffer kept
  };
  // kMaxGraphs slots; the first used_ hold keys, most recently used first.
  std::vector<Entry> entries_;
  size_t used_ = 0;
  CudaGraphStats stats_;
};

}  // namespace kiln
