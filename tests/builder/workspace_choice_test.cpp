// The rule by which a step whose workspace would grow the arena trades time for one that fits
// (builder/workspace_choice.h): the fastest fitting candidate within the allowance, never one
// that was rejected, is the chosen one itself, is slower than that or cannot be made; the
// allowance from the layer's time or the plan's per share of memory saved; and only for growth
// worth the time.
#include "builder/workspace_choice.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace kiln::testing {
namespace {

plan::Candidate timed(const std::string& name, double ms) {
  plan::Candidate c;
  c.name = name;
  c.medianMs = ms;
  return c;
}

plan::Candidate rejected(const std::string& name) {
  plan::Candidate c;
  c.name = name;
  c.rejectedBecause = "declined";
  return c;
}

struct Tactics {
  std::map<std::string, uint64_t> workspace;  // absent: cannot be made
  bool workspaceOf(const plan::Candidate& c, uint64_t& bytes) const {
    auto it = workspace.find(c.name);
    if (it == workspace.end()) return false;
    bytes = it->second;
    return true;
  }
};

const plan::Candidate* pick(const std::vector<plan::Candidate>& candidates, const Tactics& t,
                            uint64_t hole, double allowanceMs = kWorkspaceTimeTolerance) {
  return fittingCandidate(
      candidates, "fast", 1.0, allowanceMs,
      [&](const plan::Candidate& c, uint64_t& bytes) { return t.workspaceOf(c, bytes); },
      [&](uint64_t bytes) { return bytes <= hole; });
}

TEST(WorkspaceChoice, TakesTheFastestFittingCandidateWithinTheTolerance) {
  const std::vector<plan::Candidate> candidates = {
      timed("fast", 1.0),  timed("roomy", 1.05),
      timed("small", 1.2), timed("smaller", 1.1),
      rejected("refused"), timed("slow", 1.0 + kWorkspaceTimeTolerance + 0.01)};
  Tactics t;
  t.workspace = {{"fast", 100},  {"roomy", 90},  {"small", 5},
                 {"smaller", 8}, {"refused", 0}, {"slow", 0}};
  const plan::Candidate* c = pick(candidates, t, 10);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "smaller");               // 1.1 ms beats small's 1.2; roomy does not fit
  EXPECT_EQ(pick(candidates, t, 4), nullptr);  // only `slow` (too slow) and `refused` would fit
}

TEST(WorkspaceChoice, SkipsCandidatesThatCannotBeMade) {
  const std::vector<plan::Candidate> candidates = {timed("fast", 1.0), timed("gone", 1.01),
                                                   timed("kept", 1.02)};
  Tactics t;
  t.workspace = {{"fast", 100}, {"kept", 1}};
  const plan::Candidate* c = pick(candidates, t, 10);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "kept");
}

TEST(WorkspaceChoice, AWiderAllowanceReachesSlowerCandidates) {
  const std::vector<plan::Candidate> candidates = {timed("fast", 1.0), timed("small", 1.5)};
  Tactics t;
  t.workspace = {{"fast", 100}, {"small", 5}};
  EXPECT_EQ(pick(candidates, t, 10, 0.25), nullptr);
  EXPECT_EQ(pick(candidates, t, 10, 0.49), nullptr);
  const plan::Candidate* c = pick(candidates, t, 10, 0.5);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "small");
}

// The allowance is the larger of the layer's tolerance and the plan's time in proportion to the
// memory saved. The figures are ResNet-50 b64 FP16's on the H200 (2026-12-06): the stem's
// fastest algorithm grows a 159 MiB context by 80 MiB; its quarter-batch slices were 0.151 ms
// slower, half the layer's 0.301 ms, but 7% of the plan's 2.118 ms for a third of the memory.
TEST(WorkspaceChoice, AllowanceWeighsThePlansTimeAgainstTheMemorySaved) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  EXPECT_DOUBLE_EQ(tradeAllowanceMs(1.0, 100.0, 0, 100 * kMiB), kWorkspaceTimeTolerance);
  EXPECT_DOUBLE_EQ(tradeAllowanceMs(1.0, 2.0, kMiB, 1000 * kMiB), kWorkspaceTimeTolerance);
  // A quarter of the memory saved: the plan may give a quarter of that, 1/16 of its time.
  EXPECT_DOUBLE_EQ(tradeAllowanceMs(0.1, 32.0, 100 * kMiB, 300 * kMiB),
                   32.0 * kPlanTimePerMemoryShare * 0.25);
  const double stem = tradeAllowanceMs(0.301, 2.118, 80 * kMiB, 159 * kMiB);
  EXPECT_GT(stem, 0.452 - 0.301);
  EXPECT_LT(stem, 0.2);
  // The same step in a plan ten times as long for the same memory: the plan's share is the same.
  EXPECT_NEAR(tradeAllowanceMs(0.301, 21.18, 80 * kMiB, 159 * kMiB), stem * 10, 1e-9);
  // Twice the memory at stake allows more time.
  EXPECT_GT(tradeAllowanceMs(0.301, 2.118, 160 * kMiB, 159 * kMiB), stem);
}

// Only growth worth the time is traded for: a mebibyte and more, not the kilobytes by which a
// workspace may overrun its hole.
TEST(WorkspaceChoice, OnlyAMebibyteOrMoreOfGrowthIsWorthTime) {
  EXPECT_FALSE(growthWorthTime(0));
  EXPECT_FALSE(growthWorthTime(48 << 10));
  EXPECT_FALSE(growthWorthTime((uint64_t{1} << 20) - 1));
  EXPECT_TRUE(growthWorthTime(uint64_t{1} << 20));
  EXPECT_TRUE(growthWorthTime(uint64_t{80} << 20));  // ResNet-50 b64's stem in cuDNN's fastest
}

}  // namespace
// A profile plan's one workspace: the step that sets it and by how much it exceeds the rest.
TEST(WorkspaceChoice, TheLargestWorkspaceAndItsExcessOverTheOthers) {
  WorkspaceExcess e = largestWorkspaceExcess({3, 80, 0, 12, 5});
  EXPECT_EQ(e.step, 1u);
  EXPECT_EQ(e.others, 12u);
  EXPECT_EQ(e.excess, 68u);
  e = largestWorkspaceExcess({7, 2, 7});  // a tie: no one step sets it
  EXPECT_EQ(e.step, 0u);
  EXPECT_EQ(e.excess, 0u);
  e = largestWorkspaceExcess({0, 0});
  EXPECT_EQ(e.step, SIZE_MAX);
  EXPECT_EQ(e.excess, 0u);
  EXPECT_EQ(largestWorkspaceExcess({}).step, SIZE_MAX);
}

// A workspace trade is remembered beside the configuration's fastest entry and offered again as a
// candidate when a rebuild from the cache has only that entry.
TEST(WorkspaceChoice, ARememberedTradeJoinsTheCachedCandidate) {
  EXPECT_EQ(workspaceFitKey(""), "");
  const std::string fitKey = workspaceFitKey("conv|k");
  EXPECT_NE(fitKey, "conv|k");
  TimingCache cache;
  cache.record("conv|k", "fast", 1.0);
  const std::vector<plan::Candidate> cached = {timed("fast", 1.0)};
  EXPECT_EQ(withRememberedFit(cached, cache, fitKey).size(), 1u);  // nothing remembered
  cache.record(fitKey, "small", 1.2);
  const std::vector<plan::Candidate> offered = withRememberedFit(cached, cache, fitKey);
  ASSERT_EQ(offered.size(), 2u);
  EXPECT_EQ(offered[1].name, "small");
  EXPECT_EQ(offered[1].medianMs, 1.2);
  std::string tactic;
  double ms = 0;
  ASSERT_TRUE(cache.find("conv|k", tactic, ms));
  EXPECT_EQ(tactic, "fast");  // the fastest entry stays the fastest
  Tactics t;
  t.workspace = {{"fast", 100}, {"small", 5}};
  const plan::Candidate* c = fittingCandidate(
      offered, "fast", 1.0, 0.25,
      [&](const plan::Candidate& x, uint64_t& bytes) { return t.workspaceOf(x, bytes); },
      [](uint64_t bytes) { return bytes <= 10; });
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "small");
  // A candidate list that has it already (a cold build's) is left as it is.
  const std::vector<plan::Candidate> timedBoth = {timed("fast", 1.0), timed("small", 1.2)};
  EXPECT_EQ(withRememberedFit(timedBoth, cache, fitKey).size(), 2u);
}

// Two caches of one file, as a build's main session and its format alternative's have: the
// alternative saves what it timed, then the main session saves its cache, loaded before that;
// the alternative's entries stay in the file, and an entry the main session recorded wins over
// the file's while one it only loaded does not.
TEST(TimingCacheFile, ASaveKeepsWhatAnotherCacheSavedSinceItLoaded) {
  const std::string path = ::testing::TempDir() + "kiln_timing_cache_merge_test.txt";
  std::remove(path.c_str());
  TimingCache seed;
  seed.record("conv|a", "cudnn", 1.0);
  seed.record("conv|b", "cudnn", 2.0);
  ASSERT_TRUE(seed.save(path).isOk());
  TimingCache main, alternative;
  ASSERT_TRUE(main.load(path).isOk());
  ASSERT_TRUE(alternative.load(path).isOk());
  alternative.record("conv|linear", "cudnn_1", 3.0);
  alternative.record("conv|b", "cudnn_2", 1.5);  // re-timed there: newer than main's copy
  ASSERT_TRUE(alternative.save(path).isOk());
  main.record(workspaceFitKey("conv|a"), "cudnn_batch4", 1.2);
  ASSERT_TRUE(main.save(path).isOk());
  TimingCache file;
  ASSERT_TRUE(file.load(path).isOk());
  EXPECT_EQ(file.size(), 4u);
  std::string tactic;
  double ms = 0;
  ASSERT_TRUE(file.find("conv|linear", tactic, ms));
  EXPECT_EQ(tactic, "cudnn_1");
  ASSERT_TRUE(file.find("conv|b", tactic, ms));
  EXPECT_EQ(tactic, "cudnn_2");  // main only loaded its older entry
  EXPECT_EQ(ms, 1.5);
  ASSERT_TRUE(file.find(workspaceFitKey("conv|a"), tactic, ms));
  EXPECT_EQ(tactic, "cudnn_batch4");
  ASSERT_TRUE(file.find("conv|a", tactic, ms));
  EXPECT_EQ(tactic, "cudnn");
  std::remove(path.c_str());
}

}  // namespace kiln::testing
