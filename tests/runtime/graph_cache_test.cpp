// The graph cache of an execution context without a GPU: its keys, least recently used dropped,
// and a failed capture remembered per key (the CPU backend has no graphs, so every capture
// fails); and when automatic graphs give up (GraphCache::keepsPaying): not while the cache could
// still hold every key it has seen, and then only while captures are launched too rarely to earn
// back their host cost. Graphs themselves run in tests/backends/cuda (label gpu).
#include <gtest/gtest.h>

#include "runtime/graph_cache.h"

#include "backends/backend.h"

namespace kiln {
namespace {

CudaGraphStats stats(int64_t captured, int64_t replayed) {
  CudaGraphStats s;
  s.captured = captured;
  s.replayed = replayed;
  return s;
}

TEST(GraphCache, KeysAreKeptMostRecentFirstAndAFailedCaptureRunsLayerByLayer) {
  GraphCache cache(2);
  int runs = 0;
  const auto runSteps = [&] {
    ++runs;
    return Status::ok();
  };
  const auto nothing = [] { return Status::ok(); };
  const auto once = [&](uint64_t k) {
    return cache.enqueue(cpuBackend(), nullptr, {k, k}, nullptr, runSteps, nothing);
  };
  ASSERT_TRUE(once(1).isOk());  // new: layer by layer
  ASSERT_TRUE(once(1).isOk());  // seen: the capture fails on the CPU, so layer by layer
  ASSERT_TRUE(once(1).isOk());  // remembered as failed: no second try
  CudaGraphStats s = cache.stats();
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(s.direct, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.captured + s.replayed + s.held, 0);
  // kMaxGraphs other keys push key 1 out: it is new again, and its capture is tried again.
  for (uint64_t k = 2; k < 2 + GraphCache::kMaxGraphs; ++k) ASSERT_TRUE(once(k).isOk());
  ASSERT_TRUE(once(1).isOk());
  ASSERT_TRUE(once(1).isOk());
  s = cache.stats();
  EXPECT_EQ(s.failed, 2);
  // Key 2 was the least recently used when key 1 came back; key 3 is still there (failed once
  // on its second enqueue now, not new).
  ASSERT_TRUE(once(3).isOk());
  EXPECT_EQ(cache.stats().failed, 3);
  cache.clear();
  ASSERT_TRUE(once(3).isOk());  // new after clear()
  EXPECT_EQ(cache.stats().failed, 3);
  EXPECT_EQ(runs, 3 + static_cast<int>(GraphCache::kMaxGraphs) + 4);
}

TEST(GraphCachePolicy, KeepsGoingWhileTheCacheHoldsEveryCapture) {
  EXPECT_TRUE(GraphCache::keepsPaying(stats(0, 0)));
  // Each capture launched once (the capture's own launch): still within the cache's size.
  EXPECT_TRUE(GraphCache::keepsPaying(stats(1, 1)));
  EXPECT_TRUE(GraphCache::keepsPaying(
      stats(static_cast<int64_t>(GraphCache::kMaxGraphs), GraphCache::kMaxGraphs)));
}

TEST(GraphCachePolicy, GivesUpWhenKeysChurnPastTheCache) {
  const auto beyond = static_cast<int64_t>(GraphCache::kMaxGraphs) + 1;
  const int64_t enough = GraphCache::kLaunchesPerCaptureToKeep * beyond;
  EXPECT_FALSE(GraphCache::keepsPaying(stats(beyond, beyond)));
  EXPECT_FALSE(GraphCache::keepsPaying(stats(beyond, enough - 1)));
  EXPECT_TRUE(GraphCache::keepsPaying(stats(beyond, enough)));
  // A long steady run pays for later churn, until the churn outweighs it.
  EXPECT_TRUE(GraphCache::keepsPaying(stats(20, 1000)));
  EXPECT_FALSE(GraphCache::keepsPaying(stats(300, 1000)));
}

}  // namespace
}  // namespace kiln
