// Instance normalisation: its shape rule and its CPU reference: the ONNX example, a
// hand-computed case, and random shapes against a plain loop.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(SpatialInfer, Normalization) {
  NormalizationParams n;
  EXPECT_EQ(
      inferLayerOk(LayerType::kNORMALIZATION, n, {f32({2, 3, 4, 5}), f32({3}), f32({3})}).dims,
      makeDims({2, 3, 4, 5}));
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4, 5}), f32({4}), f32({3})}),
      "scale");
  EXPECT_MENTIONS(inferLayerError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4}), f32({3})}),
                  "3 input");
  EXPECT_MENTIONS(inferLayerError(LayerType::kNORMALIZATION, n, {f32({3}), f32({3}), f32({3})}),
                  "rank >= 2");
  n.epsilon = -1.f;
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4}), f32({3}), f32({3})}),
      "epsilon");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::vector<float> instanceNorm(float eps, const Dims& x, const std::vector<float>& xv,
                                const std::vector<float>& scale, const std::vector<float>& bias) {
  NormalizationParams p;
  p.epsilon = eps;
  const Dims c = makeDims({x.d[1]});
  return runReference(LayerType::kNORMALIZATION, &ops::Normalization::infer, p,
                      ops::Normalization::cpuTactics(), {x, c, c},
                      {xv.data(), scale.data(), bias.data()});
}

TEST(InstanceNorm, OnnxExample) {
  expectNearScaled(
      instanceNorm(1e-5f, makeDims({1, 2, 1, 3}), {-1, 0, 1, 2, 3, 4}, {1, 1.5f}, {0, 1}),
      {-1.2247356, 0.0, 1.2247356, -0.8371035, 1.0, 2.8371034}, 1e-6, "test_instancenorm_example");
}

TEST(InstanceNorm, HandComputed) {
  // Slice {1, 3}: mean 2, variance 1; with epsilon 3 the divisor is 2.
  expectNearScaled(instanceNorm(3.f, makeDims({1, 1, 2}), {1, 3}, {4}, {0.5f}), {-1.5, 2.5}, 1e-7,
                   "mean 2, var 1, eps 3, scale 4, bias 0.5");
}

TEST(InstanceNorm, RandomAgainstLoop) {
  Rng rng;
  for (int iter = 0; iter < 20; ++iter) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(2, 5));
    const Dims d = rng.dims(rank, 5);
    const float eps = rng.uniformFloat(1e-6f, 1e-1f);
    // An offset makes the cancellation a single-pass variance would suffer visible.
    const auto x = rng.floats(volume(d), 90.f, 110.f);
    const auto scale = rng.floats(d.d[1]), bias = rng.floats(d.d[1]);
    const auto y = instanceNorm(eps, d, x, scale, bias);
    ASSERT_EQ(y.size(), x.size()) << rng.trace();
    const int64_t s = volume(d) / (d.d[0] * d.d[1]);
    std::vector<double> want(x.size());
    for (int64_t slice = 0; slice < d.d[0] * d.d[1]; ++slice) {
      const int64_t c = slice % d.d[1];
      long double mean = 0, var = 0;
      for (int64_t i = 0; i < s; ++i) mean += x[slice * s + i];
      mean /= s;
      for (int64_t i = 0; i < s; ++i) var += (x[slice * s + i] - mean) * (x[slice * s + i] - mean);
      var /= s;
      for (int64_t i = 0; i < s; ++i)
        want[slice * s + i] = static_cast<double>(
            scale[c] * (x[slice * s + i] - mean) / std::sqrt(var + eps) + bias[c]);
    }
    expectNearScaled(y, want, 2e-5, rng.trace());
  }
}

}  // namespace
}  // namespace kiln::testing
