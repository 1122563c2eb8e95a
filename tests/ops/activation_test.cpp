// Activation and softmax kernels: hand-computed cases, random data against formulas evaluated in
// double, edge values (NaN, infinities, huge inputs), and refusals.
#include <gtest/gtest.h>

#include <limits>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

using test::act;
using test::Rng;
using test::runActivation;

TEST(Activation, HandComputed) {
  const std::vector<float> x = {-4.f, -1.f, 0.5f, 2.f, 5.f};
  EXPECT_EQ(runActivation(act(ActivationType::kRELU), x),
            (std::vector<float>{0.f, 0.f, 0.5f, 2.f, 5.f}));
  EXPECT_EQ(runActivation(act(ActivationType::kLEAKY_RELU, 0.25f), x),
            (std::vector<float>{-1.f, -0.25f, 0.5f, 2.f, 5.f}));
  EXPECT_EQ(runActivation(act(ActivationType::kCLIP, -1.5f, 2.5f), x),
            (std::vector<float>{-1.5f, -1.f, 0.5f, 2.f, 2.5f}));
  // hard-swish: x * clamp(x + 3, 0, 6) / 6 -> 0, -1*2/6, 0.5*3.5/6, 2*5/6, 5
  const auto hs = runActivation(act(ActivationType::kHARD_SWISH), x);
  const float want[] = {0.f, -1.f / 3.f, 0.5f * 3.5f / 6.f, 10.f / 6.f, 5.f};
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(hs[i], want[i], 1e-6f) << i;
  const auto sg = runActivation(act(ActivationType::kSIGMOID), {0.5f, -200.f, 200.f});
  EXPECT_NEAR(sg[0], 0.6224593312f, 1e-7f);
  EXPECT_EQ(sg[1], 0.f);
  EXPECT_EQ(sg[2], 1.f);
  const auto th = runActivation(act(ActivationType::kTANH), {0.5f, -30.f});
  EXPECT_NEAR(th[0], 0.4621171573f, 1e-7f);
  EXPECT_EQ(th[1], -1.f);
}

TEST(Activation, RandomAgainstDouble) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const auto x = rng.floats(rng.uniformInt(100, 3000), -8.f, 8.f);
  const float alpha = rng.nonZeroFloat(-2.f, 0.f), beta = rng.nonZeroFloat(0.1f, 3.f);
  for (int t = 0; t <= static_cast<int>(ActivationType::kHARD_SWISH); ++t) {
    const auto type = static_cast<ActivationType>(t);
    const auto y = runActivation(act(type, alpha, beta), x);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      double want = 0;
      switch (type) {
        case ActivationType::kRELU:
          want = v > 0 ? v : 0;
          break;
        case ActivationType::kLEAKY_RELU:
          want = v > 0 ? v : alpha * v;
          break;
        case ActivationType::kSIGMOID:
          want = 1 / (1 + std::exp(-v));
          break;
        case ActivationType::kTANH:
          want = std::tanh(v);
          break;
        case ActivationType::kCLIP:
          want = std::min(std::max(v, double{alpha}), double{beta});
          break;
        case ActivationType::kHARD_SWISH:
          want = v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
          break;
      }
      ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << "type " << t << " x=" << x[i];
    }
  }
}

TEST(Activation, NaNPassesThrough) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int t = 0; t <= static_cast<int>(ActivationType::kHARD_SWISH); ++t) {
    const auto y = runActivation(act(static_cast<ActivationType>(t), -1.f, 1.f), {nan});
    EXPECT_TRUE(std::isnan(y[0])) << "type " << t;
  }
}

TEST(Activation, Refusals) {
  const auto& ref = test::tacticNamed(ops::Activation::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto half = test::config(LayerType::kACTIVATION, act(ActivationType::kRELU),
                           {test::desc(d, DataType::kHALF)}, {test::desc(d, DataType::kHALF)});
  EXPECT_NE(test::declines(ref, half).find("fp16"), std::string::npos);
  auto bad = test::config(LayerType::kACTIVATION, act(ActivationType::kRELU), {test::desc(d)},
                          {test::desc(makeDims({2, 4}))});
  test::declines(ref, bad);
  const Dims d4 = makeDims({1, 2, 2, 2});
  auto cl = test::config(LayerType::kACTIVATION, act(ActivationType::kRELU),
                         {test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
                         {test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  test::declines(ref, cl);
  auto unknown = test::config(LayerType::kACTIVATION, act(static_cast<ActivationType>(40)),
                              {test::desc(d)}, {test::desc(d)});
  test::declines(ref, unknown);
}

std::vector<float> runSoftmax(int32_t axis, const Dims& d, const std::vector<float>& x) {
  SoftmaxParams p;
  p.axis = axis;
  auto cfg = test::config(LayerType::kSOFTMAX, p, {test::desc(d)}, {test::desc(d)});
  auto k = test::create(test::tacticNamed(ops::Softmax::cpuTactics(), "reference"), cfg);
  std::vector<float> y(x.size(), 123.f);
  if (k) {
    EXPECT_TRUE(test::runKernel(*k, {x.data()}, {y.data()}).isOk());
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
    const auto strides = test::stridesOf(d);
    const int64_t step = strides[static_cast<size_t>(a)];
    for (int64_t i = 0; i < volume(d); ++i) {
      // The slice through element i along the axis, summed plainly in double.
      const auto c = test::unravel(i, d);
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
  const auto& ref = test::tacticNamed(ops::Softmax::cpuTactics(), "reference");
  SoftmaxParams p;
  p.axis = 2;
  const Dims d = makeDims({2, 3});
  test::declines(ref, test::config(LayerType::kSOFTMAX, p, {test::desc(d)}, {test::desc(d)}));
  p.axis = 1;
  EXPECT_NE(
      test::declines(ref, test::config(LayerType::kSOFTMAX, p, {test::desc(d, DataType::kBF16)},
                                       {test::desc(d, DataType::kBF16)}))
          .find("bf16"),
      std::string::npos);
  test::declines(
      ref, test::config(LayerType::kSOFTMAX, p, {test::desc(d)}, {test::desc(makeDims({3, 2}))}));
}

}  // namespace
}  // namespace kiln
