#include "builder/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln {
namespace {

TEST(MemoryPlanner, TensorsAliveTogetherNeverOverlap) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<LiveTensor> t(1 + rng() % 30);
    for (LiveTensor& x : t) {
      x.bytes = 1 + rng() % 5000;
      x.firstStep = static_cast<int32_t>(rng() % 20);
      x.lastStep = x.firstStep + static_cast<int32_t>(rng() % 6);
    }
    const MemoryPlan plan = planMemory(t);
    ASSERT_LE(plan.arenaBytes, plan.naiveBytes);
    for (size_t i = 0; i < t.size(); ++i) {
      EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u);
      EXPECT_LE(plan.offsets[i] + t[i].bytes, plan.arenaBytes);
      for (size_t j = i + 1; j < t.size(); ++j) {
        const bool together = t[i].firstStep <= t[j].lastStep && t[j].firstStep <= t[i].lastStep;
        const bool overlap = plan.offsets[i] < plan.offsets[j] + t[j].bytes &&
                             plan.offsets[j] < plan.offsets[i] + t[i].bytes;
        EXPECT_FALSE(together && overlap) << "tensors " << i << " and " << j;
      }
    }
  }
}

TEST(MemoryPlanner, AChainReusesMemory) {
  // a -> b -> c -> d: each tensor dies once the next is made, so two slots suffice.
  std::vector<LiveTensor> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  const MemoryPlan plan = planMemory(chain);
  EXPECT_EQ(plan.naiveBytes, 4u * 1024u);
  EXPECT_EQ(plan.arenaBytes, 2u * 1024u);
}

}  // namespace
}  // namespace kiln
