// Reduce kernels: hand-computed cases, empty axes, NaN, random shapes and masks against sums done
// element by element in double, and refusals.
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

using test::Rng;

std::vector<float> runReduce(ReduceOp op, uint32_t mask, bool keep, const Dims& d,
                             const std::vector<float>& x, Dims* outDims = nullptr) {
  ReduceParams p;
  p.op = op;
  p.axesMask = mask;
  p.keepDims = keep;
  const std::vector<PluginTensorDesc> in = {test::desc(d)};
  auto cfg =
      test::config(LayerType::kREDUCE, p, in, test::inferredOutputs(ops::Reduce::infer, p, in));
  if (outDims) *outDims = cfg.outputs[0].dims;
  auto k = test::create(test::tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  std::vector<float> y(static_cast<size_t>(volume(cfg.outputs[0].dims)), 123.f);
  if (k) {
    EXPECT_TRUE(test::runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

TEST(Reduce, HandComputed) {
  const Dims d = makeDims({2, 3});
  const std::vector<float> x = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
  EXPECT_EQ(runReduce(ReduceOp::kSUM, 0b01, true, d, x), (std::vector<float>{5.f, 7.f, 9.f}));
  EXPECT_EQ(runReduce(ReduceOp::kSUM, 0b10, false, d, x), (std::vector<float>{6.f, 15.f}));
  EXPECT_EQ(runReduce(ReduceOp::kMEAN, 0b11, false, d, x), (std::vector<float>{3.5f}));
  EXPECT_EQ(runReduce(ReduceOp::kMAX, 0b10, true, d, {1.f, -2.f, 3.f, -4.f, -5.f, -6.f}),
            (std::vector<float>{3.f, -4.f}));
}

TEST(Reduce, EmptyAxesAndNaN) {
  const Dims empty = makeDims({2, 0, 3});
  EXPECT_EQ(runReduce(ReduceOp::kSUM, 0b010, false, empty, {}), std::vector<float>(6, 0.f));
  for (float v : runReduce(ReduceOp::kMEAN, 0b010, false, empty, {})) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(runReduce(ReduceOp::kMAX, 0b010, false, empty, {}),
            std::vector<float>(6, -std::numeric_limits<float>::infinity()));
  // Nothing to write when the output itself is empty.
  EXPECT_TRUE(runReduce(ReduceOp::kSUM, 0b100, false, empty, {}).empty());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto m = runReduce(ReduceOp::kMAX, 0b1, false, makeDims({3}), {1.f, nan, 2.f});
  EXPECT_TRUE(std::isnan(m[0]));
}

TEST(Reduce, RandomShapesAndMasks) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 40; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 5));
    const Dims d = rng.dims(rank, 5);
    const uint32_t mask = static_cast<uint32_t>(rng.uniformInt(1, (1 << rank) - 1));
    const bool keep = rng.uniformInt(0, 1);
    const auto op = static_cast<ReduceOp>(round % 3);
    const auto x = rng.floats(volume(d), -100.f, 100.f);
    Dims od;
    const auto y = runReduce(op, mask, keep, d, x, &od);
    // Group input elements by their coordinates on the kept axes.
    Dims kept = d;
    for (int32_t i = 0; i < rank; ++i)
      if ((mask >> i) & 1u) kept.d[i] = 1;
    ASSERT_EQ(volume(kept), volume(od));
    std::vector<double> acc(static_cast<size_t>(volume(kept)), op == ReduceOp::kMAX ? -1e300 : 0.0);
    std::vector<int64_t> count(acc.size(), 0);
    const auto ks = test::stridesOf(kept);
    for (int64_t i = 0; i < volume(d); ++i) {
      const auto c = test::unravel(i, d);
      int64_t o = 0;
      for (int32_t k = 0; k < rank; ++k)
        if (!((mask >> k) & 1u)) o += c[static_cast<size_t>(k)] * ks[static_cast<size_t>(k)];
      const double v = x[static_cast<size_t>(i)];
      auto& a = acc[static_cast<size_t>(o)];
      a = op == ReduceOp::kMAX ? std::max(a, v) : a + v;
      ++count[static_cast<size_t>(o)];
    }
    for (size_t o = 0; o < acc.size(); ++o) {
      const double want = op == ReduceOp::kMEAN ? acc[o] / static_cast<double>(count[o]) : acc[o];
      ASSERT_NEAR(y[o], want, 1e-6 * std::max(1.0, std::fabs(want)))
          << "round " << round << " mask " << mask << " output " << o;
    }
  }
}

TEST(Reduce, Refusals) {
  const auto& ref = test::tacticNamed(ops::Reduce::cpuTactics(), "reference");
  ReduceParams p;
  p.axesMask = 0b10;
  const Dims d = makeDims({2, 3});
  // keepDims says [2, 1]; a corrupted plan claims [2, 3].
  test::declines(ref, test::config(LayerType::kREDUCE, p, {test::desc(d)}, {test::desc(d)}));
  EXPECT_NE(
      test::declines(ref, test::config(LayerType::kREDUCE, p, {test::desc(d, DataType::kHALF)},
                                       {test::desc(makeDims({2, 1}), DataType::kHALF)}))
          .find("fp16"),
      std::string::npos);
  p.axesMask = 0b100;
  test::declines(
      ref, test::config(LayerType::kREDUCE, p, {test::desc(d)}, {test::desc(makeDims({2, 3}))}));
}

TEST(Reduce, RunsConcurrentlyWithOwnWorkspaces) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const Dims d = makeDims({6, 7, 8});
  const auto x = rng.floats(volume(d));
  const auto want = runReduce(ReduceOp::kMEAN, 0b101, true, d, x);
  ReduceParams p;
  p.op = ReduceOp::kMEAN;
  p.axesMask = 0b101;
  const std::vector<PluginTensorDesc> in = {test::desc(d)};
  auto cfg =
      test::config(LayerType::kREDUCE, p, in, test::inferredOutputs(ops::Reduce::infer, p, in));
  auto k = test::create(test::tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  EXPECT_GE(k->workspaceSize(), want.size() * sizeof(double));
  std::vector<std::vector<float>> outs(4, std::vector<float>(want.size()));
  std::vector<std::thread> threads;
  for (auto& o : outs)
    threads.emplace_back([&] {
      for (int i = 0; i < 30; ++i) (void)test::runKernel(*k, {x.data()}, {o.data()});
    });
  for (auto& t : threads) t.join();
  for (const auto& o : outs) EXPECT_EQ(o, want);
}

}  // namespace
}  // namespace kiln
