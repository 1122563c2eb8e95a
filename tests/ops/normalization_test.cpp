// Instance normalisation and LRN: hand-computed cases, the ONNX example, and random shapes
// against plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/spatial_test_util.h"

namespace kiln::test {
namespace {

std::vector<float> instanceNorm(float eps, const Dims& x, const std::vector<float>& xv,
                                const std::vector<float>& scale, const std::vector<float>& bias) {
  NormalizationParams p;
  p.epsilon = eps;
  const Dims c = makeDims({x.d[1]});
  return runReference(LayerType::kNORMALIZATION, &ops::Normalization::infer, p,
                      ops::Normalization::cpuTactics(), {x, c, c},
                      {xv.data(), scale.data(), bias.data()});
}

std::vector<float> lrn(const LRNParams& p, const Dims& x, const std::vector<float>& xv) {
  return runReference(LayerType::kLRN, &ops::LRN::infer, p, ops::LRN::cpuTactics(), {x},
                      {xv.data()});
}

TEST(InstanceNorm, OnnxExample) {
  expectNear(instanceNorm(1e-5f, makeDims({1, 2, 1, 3}), {-1, 0, 1, 2, 3, 4}, {1, 1.5f}, {0, 1}),
             {-1.2247356, 0.0, 1.2247356, -0.8371035, 1.0, 2.8371034}, 1e-6,
             "test_instancenorm_example");
}

TEST(InstanceNorm, HandComputed) {
  // Slice {1, 3}: mean 2, variance 1; with epsilon 3 the divisor is 2.
  expectNear(instanceNorm(3.f, makeDims({1, 1, 2}), {1, 3}, {4}, {0.5f}), {-1.5, 2.5}, 1e-7,
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
    expectNear(y, want, 2e-5, rng.trace());
  }
}

TEST(Lrn, HandComputedEvenAndOddSize) {
  LRNParams p;
  // size 2: the window of channel c is [c, c+1]; alpha/size = 1, bias 1, beta 1.
  p.size = 2;
  p.alpha = 2.f;
  p.bias = 1.f;
  p.beta = 1.f;
  expectNear(lrn(p, makeDims({1, 3, 1, 1}), {1, 2, 3}), {1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-7,
             "size 2");
  // size 3: the window is [c-1, c+1].
  p.size = 3;
  p.alpha = 3.f;
  expectNear(lrn(p, makeDims({1, 3, 1, 1}), {1, 2, 3}), {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-7,
             "size 3");
  // beta 0.5, bias 2, size 1: y = x / sqrt(2 + alpha * x^2).
  p.size = 1;
  p.alpha = 0.5f;
  p.bias = 2.f;
  p.beta = 0.5f;
  expectNear(lrn(p, makeDims({1, 2}), {2, -4}), {2.0 / 2.0, -4.0 / std::sqrt(10.0)}, 1e-7,
             "size 1");
}

TEST(Lrn, RandomAgainstLoop) {
  Rng rng;
  for (int iter = 0; iter < 20; ++iter) {
    const Dims d = rng.dims(static_cast<int32_t>(rng.uniformInt(2, 4)), 6);
    LRNParams p;
    p.size = static_cast<int32_t>(rng.uniformInt(1, 6));
    p.alpha = rng.uniformFloat(1e-4f, 1.f);
    p.beta = rng.uniformFloat(0.1f, 1.f);
    p.bias = rng.uniformFloat(0.5f, 3.f);
    const auto x = rng.floats(volume(d));
    const auto y = lrn(p, d, x);
    ASSERT_EQ(y.size(), x.size()) << rng.trace();
    const int64_t C = d.d[1], s = volume(d) / (d.d[0] * C);
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t c = (static_cast<int64_t>(i) / s) % C;
      double sq = 0;
      for (int64_t j = c - (p.size - 1) / 2; j <= c + p.size / 2; ++j)
        if (j >= 0 && j < C) {
          const double v = x[i + (j - c) * s];
          sq += v * v;
        }
      want[i] = x[i] / std::pow(p.bias + p.alpha / p.size * sq, p.beta);
    }
    expectNear(y, want, 1e-5, rng.trace());
  }
}

}  // namespace
}  // namespace kiln::test
