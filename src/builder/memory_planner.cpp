#include "builder/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

uint64_t alignUp(uint64_t v) {
  return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool overlapInTime(const LiveTensor& a, const LiveTensor& b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

}  // namespace

MemoryPlan planMemory(const std::vector<LiveTensor>& tensors) {
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors[a].bytes > tensors[b].bytes; });

  struct Placed {
    size_t index;
    uint64_t begin, end;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const uint64_t size = alignUp(std::max<uint64_t>(tensors[i].bytes, 1));
    plan.naiveBytes += size;
    // Intervals already taken by tensors alive at the same time, by start offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed& p : placed) {
      if (overlapInTime(tensors[i], tensors[p.index])) busy.emplace_back(p.begin, p.end);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;  // fits in the gap before this interval
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    placed.push_back({i, offset, offset + size});
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size);
  }
  return plan;
}

}  // namespace kiln
