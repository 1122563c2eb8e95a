#include "runtime/graph_cache.h"

#include <algorithm>

#include "core/log.h"

namespace kiln {

Status GraphCache::enqueue(const Backend& backend, Stream stream, const std::vector<uint64_t>& key,
                           std::shared_ptr<const void> keep,
                           const std::function<Status()>& runSteps,
                           const std::function<Status()>& beforeLaunch) {
  size_t i = 0;
  while (i < entries_.size() && entries_[i].key != key) ++i;
  if (i == entries_.size()) {
    Entry fresh;
    fresh.key = key;
    entries_.insert(entries_.begin(), std::move(fresh));
    if (entries_.size() > kMaxGraphs) entries_.pop_back();
    ++stats_.direct;
    return runSteps();
  }
  std::rotate(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i),
              entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  Entry& entry = entries_.front();
  if (entry.failed) {
    ++stats_.direct;
    return runSteps();
  }
  if (!entry.graph) {
    std::unique_ptr<IDeviceGraph> graph;
    const Status captured = backend.captureGraph(stream, runSteps, graph);
    if (!captured) {
      entry.failed = true;
      ++stats_.failed;
      ++stats_.direct;
      logMessage(Severity::kWarning,
                 "enqueue: these input shapes and addresses run layer by layer, as a CUDA graph "
                 "could not be captured: " +
                     captured.message());
      return runSteps();
    }
    entry.graph = std::move(graph);
    entry.keep = std::move(keep);
    ++stats_.captured;
  }
  KILN_RETURN_IF_ERROR(beforeLaunch());
  ++stats_.replayed;
  return entry.graph->launch(stream).withContext("enqueue: launching the CUDA graph");
}

CudaGraphStats GraphCache::stats() const {
  CudaGraphStats s = stats_;
  s.held = 0;
  for (const Entry& e : entries_) s.held += e.graph != nullptr;
  return s;
}

}  // namespace kiln
