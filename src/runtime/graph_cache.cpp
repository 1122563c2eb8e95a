#include "runtime/graph_cache.h"

#include <algorithm>

#include "core/log.h"

namespace kiln {

GraphCache::GraphCache(size_t keyLength) : entries_(kMaxGraphs) {
  for (Entry& e : entries_) e.key.reserve(keyLength);
}

void GraphCache::Entry::reset() {
  graph.reset();  // before what it launches
  keep.reset();
  failed = false;
  key.clear();  // keeps its buffer
}

void GraphCache::clear() {
  for (size_t i = 0; i < used_; ++i) entries_[i].reset();
  used_ = 0;
}

Status GraphCache::enqueue(const Backend& backend, Stream stream, const std::vector<uint64_t>& key,
                           std::shared_ptr<const void> keep,
                           const std::function<Status()>& runSteps,
                           const std::function<Status()>& beforeLaunch) {
  size_t i = 0;
  while (i < used_ && entries_[i].key != key) ++i;
  if (i == used_) {
    // A new key takes a free slot, or the least recently used one's; its key buffer is reused.
    if (used_ < entries_.size()) ++used_;
    i = used_ - 1;
    entries_[i].reset();
    entries_[i].key.assign(key.begin(), key.end());
    std::rotate(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i),
                entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
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
  for (size_t i = 0; i < used_; ++i) s.held += entries_[i].graph != nullptr;
  return s;
}

}  // namespace kiln
