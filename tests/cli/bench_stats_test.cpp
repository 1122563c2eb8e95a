// `kiln bench` statistics (tools/bench_stats): percentiles as NumPy's default computes them,
// summaries of one sample and of none, throughput, and per-layer aggregation with shares.
#include "bench_stats.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace {

TEST(BenchStats, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> five = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(percentile(five, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(five, 25), 2);
  EXPECT_DOUBLE_EQ(percentile(five, 50), 3);
  EXPECT_DOUBLE_EQ(percentile(five, 90), 4.6);  // numpy.percentile([1,2,3,4,5], 90)
  EXPECT_DOUBLE_EQ(percentile(five, 100), 5);
  const std::vector<double> four = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(percentile(four, 50), 25);  // an even count: between the middle two
  EXPECT_DOUBLE_EQ(percentile(four, 90), 37);
  EXPECT_DOUBLE_EQ(percentile(four, 99), 39.7);
  // Out-of-range p is clamped; no samples give 0.
  EXPECT_DOUBLE_EQ(percentile(four, -5), 10);
  EXPECT_DOUBLE_EQ(percentile(four, 250), 40);
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

TEST(BenchStats, SummaryOfUnsortedSamples) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // 100 .. 1
  const Summary s = summarize(samples);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_NEAR(s.p90, 90.1, 1e-12);
  EXPECT_NEAR(s.p99, 99.01, 1e-12);
}

TEST(BenchStats, OneSampleIsEveryStatistic) {
  const Summary s = summarize({0.25});
  EXPECT_EQ(s.count, 1u);
  for (double v : {s.min, s.max, s.mean, s.median, s.p90, s.p99}) EXPECT_DOUBLE_EQ(v, 0.25);
}

TEST(BenchStats, NoSamplesGiveZeros) {
  const Summary s = summarize({});
  EXPECT_EQ(s.count, 0u);
  for (double v : {s.min, s.max, s.mean, s.median, s.p90, s.p99}) EXPECT_EQ(v, 0);
}

TEST(BenchStats, PerSecond) {
  EXPECT_DOUBLE_EQ(perSecond(100, 1000), 100);
  EXPECT_DOUBLE_EQ(perSecond(3, 1.5), 2000);
  EXPECT_EQ(perSecond(5, 0), 0);  // no time passed: no rate rather than infinity
}

TEST(BenchStats, LayersInExecutionOrderWithShares) {
  // Two runs of three layers, reported out of order.
  std::vector<LayerSample> samples;
  auto add = [&](int run, int index, const char* name, double ms) {
    LayerSample s;
    s.run = run;
    s.index = index;
    s.name = name;
    s.type = "T" + std::to_string(index);
    s.tactic = "t";
    s.durationMs = ms;
    s.hostMs = ms / 10;
    samples.push_back(s);
  };
  add(0, 2, "c", 5);
  add(0, 0, "a", 1);
  add(0, 1, "b", 2);
  add(1, 0, "a", 3);
  add(1, 1, "b", 2);
  add(1, 2, "c", 7);
  const std::vector<LayerSummary> layers = summarizeLayers(samples);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].name, "a");
  EXPECT_EQ(layers[1].name, "b");
  EXPECT_EQ(layers[2].name, "c");
  EXPECT_EQ(layers[2].type, "T2");
  EXPECT_EQ(layers[0].time.count, 2u);
  EXPECT_DOUBLE_EQ(layers[0].time.mean, 2);
  EXPECT_DOUBLE_EQ(layers[2].time.max, 7);
  EXPECT_EQ(layers[2].host.count, 2u);
  EXPECT_DOUBLE_EQ(layers[2].host.median, 0.6);  // of 0.5 and 0.7
  // Means 2, 2, 6 of a total of 10.
  EXPECT_DOUBLE_EQ(layers[0].share, 0.2);
  EXPECT_DOUBLE_EQ(layers[1].share, 0.2);
  EXPECT_DOUBLE_EQ(layers[2].share, 0.6);
  EXPECT_TRUE(summarizeLayers({}).empty());
}

TEST(BenchStats, LayersThatTakeNoTimeHaveNoShare) {
  LayerSample s;
  s.name = "instant";
  const std::vector<LayerSummary> layers = summarizeLayers({s});
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].share, 0);  // not NaN
}

}  // namespace
}  // namespace kiln::cli
