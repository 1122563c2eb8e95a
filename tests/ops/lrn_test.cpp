// Local response normalisation: its shape rule and its CPU reference: hand-computed cases of even
// and odd size, and random shapes against a plain loop.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(SpatialInfer, Lrn) {
  LRNParams l;
  EXPECT_EQ(inferLayerOk(LayerType::kLRN, l, {f32({1, 5, 2, 2})}).dims, makeDims({1, 5, 2, 2}));
  l.size = 0;
  EXPECT_MENTIONS(inferLayerError(LayerType::kLRN, l, {f32({1, 5, 2, 2})}), "size");
  l.size = 3;
  EXPECT_MENTIONS(inferLayerError(LayerType::kLRN, l, {typed({1, 5}, DataType::kINT64)}), "int64");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::vector<float> lrn(const LRNParams& p, const Dims& x, const std::vector<float>& xv) {
  return runReference(LayerType::kLRN, &ops::LRN::infer, p, ops::LRN::cpuTactics(), {x},
                      {xv.data()});
}

TEST(Lrn, HandComputedEvenAndOddSize) {
  LRNParams p;
  // size 2: the window of channel c is [c, c+1]; alpha/size = 1, bias 1, beta 1.
  p.size = 2;
  p.alpha = 2.f;
  p.bias = 1.f;
  p.beta = 1.f;
  expectNearScaled(lrn(p, makeDims({1, 3, 1, 1}), {1, 2, 3}), {1.0 / 6, 2.0 / 14, 3.0 / 10}, 1e-7,
                   "size 2");
  // size 3: the window is [c-1, c+1].
  p.size = 3;
  p.alpha = 3.f;
  expectNearScaled(lrn(p, makeDims({1, 3, 1, 1}), {1, 2, 3}), {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-7,
                   "size 3");
  // beta 0.5, bias 2, size 1: y = x / sqrt(2 + alpha * x^2).
  p.size = 1;
  p.alpha = 0.5f;
  p.bias = 2.f;
  p.beta = 0.5f;
  expectNearScaled(lrn(p, makeDims({1, 2}), {2, -4}), {2.0 / 2.0, -4.0 / std::sqrt(10.0)}, 1e-7,
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
    expectNearScaled(y, want, 1e-5, rng.trace());
  }
}

}  // namespace
}  // namespace kiln::testing
