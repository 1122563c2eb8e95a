// Activation memory: one arena per execution context, tensors placed by liveness so that tensors
// whose lifetimes do not overlap share bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln {

struct LiveTensor {
  uint64_t bytes = 0;
  int32_t firstStep = 0;  // the step that writes it
  int32_t lastStep = 0;   // the last step that reads it (>= firstStep)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per tensor, aligned to kArenaAlignment
  uint64_t arenaBytes = 0;
  uint64_t naiveBytes = 0;  // every tensor its own aligned slot
};

constexpr uint64_t kArenaAlignment = 64;

// Greedy by size (largest first), each tensor at the lowest offset that does not overlap any
// already-placed tensor live at the same time. Deterministic for the same input.
MemoryPlan planMemory(const std::vector<LiveTensor>& tensors);

}  // namespace kiln
