// When a context's automatic CUDA graphs give up (GraphCache::keepsPaying): not while the cache
// could still hold every key it has seen, and then only while captures are launched too rarely
// to earn back their host cost. The graphs themselves run in tests/backends/cuda (label gpu).
#include <gtest/gtest.h>

#include "runtime/graph_cache.h"

namespace kiln {
namespace {

CudaGraphStats stats(int64_t captured, int64_t replayed) {
  CudaGraphStats s;
  s.captured = captured;
  s.replayed = replayed;
  return s;
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
