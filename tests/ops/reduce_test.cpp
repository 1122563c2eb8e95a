// Reduce and argmax: the shape rule (kept and dropped dims, argmax's one axis and int64 output)
// and the CPU tactic: hand-computed cases, empty axes, NaN, random shapes and masks against sums
// done element by element in double, argmax with ties and NaN, refusals and concurrent runs.
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferReduce, KeepAndDropDims) {
  ReduceParams p;
  p.axesMask = 0b101;
  p.keepDims = true;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({1, 3, 1}));
  p.keepDims = false;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({3}));
  p.axesMask = 0b111;
  EXPECT_EQ(inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})}).dims, makeDims({}));
}

TEST(InferReduce, Refusals) {
  ReduceParams p;
  p.axesMask = 0;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "no axis");
  p.axesMask = 0b100;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "names axis 2");
  p.axesMask = 0x80000000u;
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "names axis 31");
  p.axesMask = 1;
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ReduceOp>(5);
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "unknown op 5");
}

TEST(InferOnnxReduce, ArgMax) {
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 0b010;
  p.keepDims = true;
  TensorShape s = inferOk(ops::Reduce::infer, p, {shape({2, 3, 4})});
  EXPECT_EQ(s.dims, makeDims({2, 1, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
  p.keepDims = false;
  s = inferOk(ops::Reduce::infer, p, {shape({2, 3, 4}, DataType::kINT32)});
  EXPECT_EQ(s.dims, makeDims({2, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
  p.axesMask = 0b011;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "exactly one axis");
  p.axesMask = 0;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "no axis");
  p.axesMask = 0b1000;
  inferFails(ops::Reduce::infer, p, {shape({2, 3, 4})}, "names axis 3");
  p.axesMask = 0b10;
  inferFails(ops::Reduce::infer, p, {shape({2, 0, 4})}, "size 0");
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kBOOL)}, "int32 or int64");
  // The other reductions still refuse integers.
  p.op = ReduceOp::kMAX;
  inferFails(ops::Reduce::infer, p, {shape({2, 3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ReduceOp>(4);
  inferFails(ops::Reduce::infer, p, {shape({2, 3})}, "unknown op 4");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::vector<float> runReduce(ReduceOp op, uint32_t mask, bool keep, const Dims& d,
                             const std::vector<float>& x, Dims* outDims = nullptr) {
  ReduceParams p;
  p.op = op;
  p.axesMask = mask;
  p.keepDims = keep;
  const std::vector<PluginTensorDesc> in = {desc(d)};
  auto cfg = config(LayerType::kREDUCE, p, in, inferredOutputs(ops::Reduce::infer, p, in));
  if (outDims) *outDims = cfg.outputs[0].dims;
  auto k = create(tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  std::vector<float> y(static_cast<size_t>(volume(cfg.outputs[0].dims)), 123.f);
  if (k) {
    EXPECT_TRUE(runKernel(*k, {x.data()}, {y.data()}).isOk());
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
    const auto ks = stridesOf(kept);
    for (int64_t i = 0; i < volume(d); ++i) {
      const auto c = unravel(i, d);
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
  const auto& ref = tacticNamed(ops::Reduce::cpuTactics(), "reference");
  ReduceParams p;
  p.axesMask = 0b10;
  const Dims d = makeDims({2, 3});
  // keepDims says [2, 1]; a corrupted plan claims [2, 3].
  declines(ref, config(LayerType::kREDUCE, p, {desc(d)}, {desc(d)}));
  EXPECT_NE(declines(ref, config(LayerType::kREDUCE, p, {desc(d, DataType::kHALF)},
                                 {desc(makeDims({2, 1}), DataType::kHALF)}))
                .find("fp16"),
            std::string::npos);
  p.axesMask = 0b100;
  declines(ref, config(LayerType::kREDUCE, p, {desc(d)}, {desc(makeDims({2, 3}))}));
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
  const std::vector<PluginTensorDesc> in = {desc(d)};
  auto cfg = config(LayerType::kREDUCE, p, in, inferredOutputs(ops::Reduce::infer, p, in));
  auto k = create(tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  EXPECT_GE(k->workspaceSize(), want.size() * sizeof(double));
  std::vector<std::vector<float>> outs(4, std::vector<float>(want.size()));
  std::vector<std::thread> threads;
  for (auto& o : outs)
    threads.emplace_back([&] {
      for (int i = 0; i < 30; ++i) (void)runKernel(*k, {x.data()}, {o.data()});
    });
  for (auto& t : threads) t.join();
  for (const auto& o : outs) EXPECT_EQ(o, want);
}

// ---------------------------------------------------------------------------------------------
// Argmax

template <class T>
std::vector<int64_t> runArgMax(int32_t axis, bool keep, const Dims& d, const std::vector<T>& x,
                               Dims* outDims = nullptr) {
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 1u << axis;
  p.keepDims = keep;
  const std::vector<PluginTensorDesc> in = {desc(d, typeOf<T>())};
  auto cfg = config(LayerType::kREDUCE, p, in, inferredOutputs(ops::Reduce::infer, p, in));
  if (cfg.outputs.empty()) return {};
  if (outDims) *outDims = cfg.outputs[0].dims;
  auto k = create(tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  std::vector<int64_t> y(static_cast<size_t>(volume(cfg.outputs[0].dims)), -7);
  if (k) {
    EXPECT_TRUE(runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

template <class T>
void checkArgMax(Rng& rng) {
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 15; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims d = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(0, rank - 1));
    const bool keep = rng.uniformInt(0, 1);
    // Few distinct values, so that ties (first index wins) are common.
    std::vector<T> x(static_cast<size_t>(volume(d)));
    for (auto& v : x) v = static_cast<T>(rng.nonZeroInt(-4, 4));
    Dims od;
    const auto y = runArgMax(axis, keep, d, x, &od);
    Dims kept = d;
    kept.d[axis] = 1;
    ASSERT_EQ(od.nbDims, keep ? rank : rank - 1);
    ASSERT_EQ(volume(od), volume(kept));
    const int64_t step = stridesOf(d)[static_cast<size_t>(axis)];
    for (int64_t o = 0; o < volume(kept); ++o) {
      const auto c = unravel(o, kept);
      int64_t first = 0;
      const auto s = stridesOf(d);
      for (int32_t k = 0; k < rank; ++k)
        first += c[static_cast<size_t>(k)] * s[static_cast<size_t>(k)];
      int64_t best = 0;
      for (int64_t k = 1; k < d.d[axis]; ++k)
        if (x[static_cast<size_t>(first + k * step)] > x[static_cast<size_t>(first + best * step)])
          best = k;
      ASSERT_EQ(y[static_cast<size_t>(o)], best) << "round " << round << " output " << o;
    }
  }
}

TEST(OnnxArgMax, RandomFp32) {
  Rng rng;
  checkArgMax<float>(rng);
}
TEST(OnnxArgMax, RandomInt32) {
  Rng rng;
  checkArgMax<int32_t>(rng);
}
TEST(OnnxArgMax, RandomInt64) {
  Rng rng;
  checkArgMax<int64_t>(rng);
}

TEST(OnnxArgMax, HandComputedAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // [[2, 7, 7], [9, -1, 9]]
  const std::vector<float> x = {2.f, 7.f, 7.f, 9.f, -1.f, 9.f};
  EXPECT_EQ(runArgMax<float>(1, false, makeDims({2, 3}), x), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(runArgMax<float>(0, true, makeDims({2, 3}), x), (std::vector<int64_t>{1, 0, 1}));
  // The first NaN wins (numpy's argmax), even over +inf.
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({4}), {inf, 1.f, nan, nan}),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({2}), {nan, inf}), (std::vector<int64_t>{0}));
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({3}), {-inf, -inf, -inf}),
            (std::vector<int64_t>{0}));
  // int64 values beyond fp32's exact range compare exactly.
  const int64_t big = (int64_t{1} << 40) + 1;
  EXPECT_EQ(runArgMax<int64_t>(0, false, makeDims({2}), {big - 1, big}), (std::vector<int64_t>{1}));
  // An empty output is fine.
  EXPECT_TRUE(runArgMax<float>(1, false, makeDims({0, 3}), {}).empty());
}

TEST(OnnxArgMax, Refusals) {
  const auto& ref = tacticNamed(ops::Reduce::cpuTactics(), "reference");
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 0b1;
  const Dims d = makeDims({4, 3});
  // A plan that claims fp32 indices, or two axes, is refused.
  declines(ref, config(LayerType::kREDUCE, p, {desc(d)}, {desc(makeDims({1, 3}))}));
  p.axesMask = 0b11;
  declines(ref,
           config(LayerType::kREDUCE, p, {desc(d)}, {desc(makeDims({1, 1}), DataType::kINT64)}));
  p.axesMask = 0b1;
  EXPECT_NE(declines(ref, config(LayerType::kREDUCE, p, {desc(d, DataType::kHALF)},
                                 {desc(makeDims({1, 3}), DataType::kINT64)}))
                .find("fp16"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
