// Softmax and log-softmax: the shape rule's axis checks and the CPU tactic: hand-computed cases,
// random shapes and axes against sums in double, stability on huge and infinite inputs, NaN, and
// refusals.
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferSoftmax, AxisChecks) {
  SoftmaxParams p;
  p.axis = -1;
  EXPECT_EQ(inferOk(ops::Softmax::infer, p, {shape({2, 3, 4})}).dims, makeDims({2, 3, 4}));
  p.axis = -3;
  EXPECT_EQ(inferOk(ops::Softmax::infer, p, {shape({2, 3, 4})}).dims, makeDims({2, 3, 4}));
  p.axis = 3;
  inferFails(ops::Softmax::infer, p, {shape({2, 3, 4})}, "axis 3 is outside [-3, 3)");
  p.axis = -4;
  inferFails(ops::Softmax::infer, p, {shape({2, 3, 4})}, "axis -4");
  p.axis = 0;
  inferFails(ops::Softmax::infer, p, {shape({})}, "rank >= 1");
  inferFails(ops::Softmax::infer, p, {shape({3}, DataType::kINT64)}, "floating-point");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::vector<float> runSoftmax(int32_t axis, const Dims& d, const std::vector<float>& x) {
  SoftmaxParams p;
  p.axis = axis;
  auto cfg = config(LayerType::kSOFTMAX, p, {desc(d)}, {desc(d)});
  auto k = create(tacticNamed(ops::Softmax::cpuTactics(), "reference"), cfg);
  std::vector<float> y(x.size(), 123.f);
  if (k) {
    EXPECT_TRUE(runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

TEST(Softmax, HandComputed) {
  // softmax([1, 2, 3]) = e^k / (e + e^2 + e^3)
  const auto y = runSoftmax(0, makeDims({3}), {1.f, 2.f, 3.f});
  EXPECT_NEAR(y[0], 0.09003057f, 1e-7f);
  EXPECT_NEAR(y[1], 0.24472847f, 1e-7f);
  EXPECT_NEAR(y[2], 0.66524096f, 1e-7f);
  // Over axis 0 of a [2, 2]: columns are normalised.
  const auto c = runSoftmax(-2, makeDims({2, 2}), {1.f, 5.f, 1.f, 3.f});
  EXPECT_NEAR(c[0], 0.5f, 1e-7f);
  EXPECT_NEAR(c[2], 0.5f, 1e-7f);
  EXPECT_NEAR(c[1], 0.88079708f, 1e-7f);
  EXPECT_NEAR(c[3], 0.11920292f, 1e-7f);
}

TEST(Softmax, StableOnHugeAndInfiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(runSoftmax(0, makeDims({2}), {1e30f, 1e30f}), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(runSoftmax(0, makeDims({3}), {-inf, 0.f, -1e30f}), (std::vector<float>{0.f, 1.f, 0.f}));
  const auto y = runSoftmax(0, makeDims({2}), {std::numeric_limits<float>::quiet_NaN(), 1.f});
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
}

TEST(Softmax, RandomShapesAndAxes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 20; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 5));
    const Dims d = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(-rank, rank - 1));
    const int32_t a = axis < 0 ? axis + rank : axis;
    const auto x = rng.floats(volume(d), -10.f, 10.f);
    const auto y = runSoftmax(axis, d, x);
    const auto strides = stridesOf(d);
    const int64_t step = strides[static_cast<size_t>(a)];
    for (int64_t i = 0; i < volume(d); ++i) {
      // The slice through element i along the axis, summed plainly in double.
      const auto c = unravel(i, d);
      const int64_t first = i - c[static_cast<size_t>(a)] * step;
      double sum = 0;
      for (int64_t k = 0; k < d.d[a]; ++k)
        sum += std::exp(double{x[static_cast<size_t>(first + k * step)]});
      const double want = std::exp(double{x[static_cast<size_t>(i)]}) / sum;
      ASSERT_NEAR(y[static_cast<size_t>(i)], want, 1e-6 * std::max(want, 1e-3))
          << "round " << round << " axis " << axis << " element " << i;
    }
  }
}

TEST(Softmax, Refusals) {
  const auto& ref = tacticNamed(ops::Softmax::cpuTactics(), "reference");
  SoftmaxParams p;
  p.axis = 2;
  const Dims d = makeDims({2, 3});
  declines(ref, config(LayerType::kSOFTMAX, p, {desc(d)}, {desc(d)}));
  p.axis = 1;
  EXPECT_NE(declines(ref, config(LayerType::kSOFTMAX, p, {desc(d, DataType::kBF16)},
                                 {desc(d, DataType::kBF16)}))
                .find("bf16"),
            std::string::npos);
  declines(ref, config(LayerType::kSOFTMAX, p, {desc(d)}, {desc(makeDims({3, 2}))}));
}

// ---------------------------------------------------------------------------------------------
// Log-softmax

std::vector<float> runLogSoftmax(int32_t axis, const Dims& d, const std::vector<float>& x) {
  SoftmaxParams p;
  p.axis = axis;
  p.log = true;
  auto cfg = config(LayerType::kSOFTMAX, p, {desc(d)}, {desc(d)});
  auto k = create(tacticNamed(ops::Softmax::cpuTactics(), "reference"), cfg);
  std::vector<float> y(x.size(), 123.f);
  if (k) {
    EXPECT_TRUE(runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

TEST(OnnxLogSoftmax, RandomShapesAndAxes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 15; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims d = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(-rank, rank - 1));
    const int32_t a = axis < 0 ? axis + rank : axis;
    const auto x = rng.floats(volume(d), -20.f, 20.f);
    const auto y = runLogSoftmax(axis, d, x);
    const int64_t step = stridesOf(d)[static_cast<size_t>(a)];
    for (int64_t i = 0; i < volume(d); ++i) {
      const auto c = unravel(i, d);
      const int64_t first = i - c[static_cast<size_t>(a)] * step;
      double sum = 0;
      for (int64_t k = 0; k < d.d[a]; ++k)
        sum += std::exp(double{x[static_cast<size_t>(first + k * step)]});
      const double want = x[static_cast<size_t>(i)] - std::log(sum);
      ASSERT_NEAR(y[static_cast<size_t>(i)], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << "round " << round << " axis " << axis << " element " << i;
    }
  }
}

TEST(OnnxLogSoftmax, StableOnHugeAndInfiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  // Plain log(softmax) would give log(0) = -inf for the small entries; these stay finite.
  const auto y = runLogSoftmax(0, makeDims({3}), {1000.f, 0.f, -1000.f});
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], -1000.f);
  EXPECT_EQ(y[2], -2000.f);
  const auto h = runLogSoftmax(0, makeDims({2}), {1e30f, 1e30f});
  EXPECT_NEAR(h[0], -0.69314718f, 1e-7f);
  EXPECT_NEAR(h[1], -0.69314718f, 1e-7f);
  const auto e = runLogSoftmax(0, makeDims({2}), {-inf, 2.f});
  EXPECT_EQ(e[0], -inf);
  EXPECT_EQ(e[1], 0.f);
  const auto n = runLogSoftmax(0, makeDims({2}), {std::numeric_limits<float>::quiet_NaN(), 1.f});
  EXPECT_TRUE(std::isnan(n[0]) && std::isnan(n[1]));
}

}  // namespace
}  // namespace kiln::testing
