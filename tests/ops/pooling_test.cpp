// Pooling: its shape rule (ceil mode, global pooling, errors) and its CPU reference: hand-computed
// cases (ONNX's examples among them), an independent position-by-position oracle on random shapes,
// and declining with reasons.
#include <gtest/gtest.h>

#include <algorithm>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferPooling, Shapes) {
  PoolingParams p;
  p.kernelH = p.kernelW = 3;
  p.strideH = p.strideW = 2;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 3, 4}));
  p.ceilMode = true;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 4, 4}));
  p.type = PoolingType::kGLOBAL_AVERAGE;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({2, 3, 8, 9})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 3, 1, 1}));
}

TEST(InferPooling, CeilModeDropsWindowStartingInEndPadding) {
  PoolingParams p;
  p.kernelH = 2;
  p.strideH = 2;
  p.padTop = p.padBottom = 1;
  p.ceilMode = true;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Pooling::infer(p, {f32({1, 1, 3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({1, 1, 2, 4}));  // ceil((3+2-2)/2)+1 = 3, last one dropped
}

TEST(InferPooling, Errors) {
  PoolingParams p;
  p.kernelH = p.kernelW = 3;
  std::vector<TensorShape> out;
  expectError(ops::Pooling::infer(p, {}, out), "1 input");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 8})}, out), "rank 4");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 2, 8})}, out), "larger than the padded input");
  expectError(ops::Pooling::infer(p, {f32({1, 3, 0, 8})}, out), "empty");
  PoolingParams bad = p;
  bad.padTop = 3;
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "smaller than the kernel");
  bad = p;
  bad.kernelW = 0;
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "kernelW");
  bad = p;
  bad.type = static_cast<PoolingType>(9);
  expectError(ops::Pooling::infer(bad, {f32({1, 3, 8, 8})}, out), "pooling type");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

KernelConfig poolConfig(const PoolingParams& p, const Dims& x) {
  KernelConfig c;
  c.type = LayerType::kPOOLING;
  c.params = p;
  c.inputs.push_back(fp32(x));
  std::vector<TensorShape> out;
  Status s = ops::Pooling::infer(p, {{x, DataType::kFLOAT}}, out);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (s.isOk()) c.outputs.push_back(fp32(out[0].dims));
  c.constantInputs.assign(1, nullptr);
  return c;
}

std::vector<float> runPool(const PoolingParams& p, const Dims& x, const std::vector<float>& xv) {
  return runTactic(*findTactic(ops::Pooling::cpuTactics(), "reference"), poolConfig(p, x), {xv});
}

PoolingParams window(PoolingType type, int32_t k, int32_t s, int32_t pad = 0) {
  PoolingParams p;
  p.type = type;
  p.kernelH = p.kernelW = k;
  p.strideH = p.strideW = s;
  p.padTop = p.padLeft = p.padBottom = p.padRight = pad;
  return p;
}

TEST(PoolingReference, Max2x2) {
  expectNear(runPool(window(PoolingType::kMAX, 2, 2), makeDims({1, 1, 4, 4}),
                     {1, 5, 2, 0, 3, 4, 8, 7, -1, -2, -3, -4, -5, -6, -8, -7}),
             {5, 8, -1, -3});
}

TEST(PoolingReference, MaxPaddingNeverWins) {
  // All values negative: a zero from the padding must not appear.
  expectNear(runPool(window(PoolingType::kMAX, 2, 1, 1), makeDims({1, 1, 2, 2}), {-1, -2, -3, -4}),
             {-1, -1, -2, -1, -1, -2, -3, -3, -4});
}

TEST(PoolingReference, AverageExcludingPad) {
  expectNear(runPool(window(PoolingType::kAVERAGE, 2, 1, 1), makeDims({1, 1, 2, 2}), {1, 2, 3, 4}),
             {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
}

TEST(PoolingReference, AverageIncludingPad) {
  PoolingParams p = window(PoolingType::kAVERAGE, 2, 1, 1);
  p.countIncludePad = true;
  expectNear(runPool(p, makeDims({1, 1, 2, 2}), {1, 2, 3, 4}),
             {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1});
}

// ONNX test_averagepool_2d_ceil.
TEST(PoolingReference, AverageCeilModeOnnx) {
  PoolingParams p = window(PoolingType::kAVERAGE, 3, 2);
  p.ceilMode = true;
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  expectNear(runPool(p, makeDims({1, 1, 4, 4}), x), {6, 7.5f, 12, 13.5f});
}

// ONNX test_maxpool_2d_ceil.
TEST(PoolingReference, MaxCeilModeOnnx) {
  PoolingParams p = window(PoolingType::kMAX, 3, 2);
  p.ceilMode = true;
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  expectNear(runPool(p, makeDims({1, 1, 4, 4}), x), {11, 12, 15, 16});
}

TEST(PoolingReference, CeilModeDropsWindowStartingInEndPadding) {
  PoolingParams p;
  p.type = PoolingType::kMAX;
  p.kernelH = 2;
  p.strideH = 2;
  p.padTop = p.padBottom = 1;
  p.ceilMode = true;
  // Padded rows: pad, 1, 2, 3, pad. Windows start at -1 and 1; one at 3 would start in the pad.
  expectNear(runPool(p, makeDims({1, 1, 3, 1}), {1, 2, 3}), {1, 3});
}

TEST(PoolingReference, CeilModeAverageIncludePadCountsOnlyRealPadding) {
  PoolingParams p;
  p.type = PoolingType::kAVERAGE;
  p.kernelH = 2;
  p.strideH = 2;
  p.padBottom = 1;
  p.countIncludePad = true;
  p.ceilMode = true;
  // Padded rows 1, 2, 3, 4, 5, pad: windows [1,2] [3,4] [5,pad]; the last one also counts the pad.
  expectNear(runPool(p, makeDims({1, 1, 5, 1}), {1, 2, 3, 4, 5}), {1.5f, 3.5f, 2.5f});
  // Without the pad row, the ceil window [5, beyond] divides by the one real element.
  p.padBottom = 0;
  expectNear(runPool(p, makeDims({1, 1, 5, 1}), {1, 2, 3, 4, 5}), {1.5f, 3.5f, 5});
}

TEST(PoolingReference, GlobalMaxAndAverage) {
  const std::vector<float> x = {1, -2, 3, 4, 5, -6, /* plane 2 */ -1, -1, -1, -1, -1, -7};
  PoolingParams p;
  p.type = PoolingType::kGLOBAL_MAX;
  p.kernelH = p.kernelW = 7;  // ignored by global pooling
  expectNear(runPool(p, makeDims({1, 2, 2, 3}), x), {5, -1});
  p.type = PoolingType::kGLOBAL_AVERAGE;
  expectNear(runPool(p, makeDims({1, 2, 2, 3}), x), {5.f / 6, -2});
}

// Position-by-position oracle, formulated differently from the reference: walk every window
// position in padded coordinates and classify it as image, padding or beyond the padded input.
std::vector<float> oracle(const PoolingParams& p, const Dims& x, const Dims& y,
                          const std::vector<float>& xv) {
  std::vector<float> out;
  const int64_t H = x.d[2], W = x.d[3];
  for (int64_t c = 0; c < x.d[0] * x.d[1]; ++c)
    for (int64_t oh = 0; oh < y.d[2]; ++oh)
      for (int64_t ow = 0; ow < y.d[3]; ++ow) {
        double sum = 0, best = -1e300;
        int64_t inImage = 0, inPadded = 0;
        for (int64_t a = oh * p.strideH; a < oh * p.strideH + p.kernelH; ++a)
          for (int64_t b = ow * p.strideW; b < ow * p.strideW + p.kernelW; ++b) {
            const bool padded = a < H + p.padTop + p.padBottom && b < W + p.padLeft + p.padRight;
            const int64_t h = a - p.padTop, w = b - p.padLeft;
            if (padded) ++inPadded;
            if (h >= 0 && h < H && w >= 0 && w < W) {
              const double v = xv[(c * H + h) * W + w];
              ++inImage;
              sum += v;
              best = std::max(best, v);
            }
          }
        if (p.type == PoolingType::kMAX)
          out.push_back(static_cast<float>(best));
        else
          out.push_back(static_cast<float>(sum / (p.countIncludePad ? inPadded : inImage)));
      }
  return out;
}

TEST(PoolingReference, MatchesOracleOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 300; ++i) {
    PoolingParams p;
    p.type = rng.coin() ? PoolingType::kMAX : PoolingType::kAVERAGE;
    p.kernelH = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.kernelW = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.strideH = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.strideW = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.padTop = static_cast<int32_t>(rng.uniformInt(0, p.kernelH - 1));
    p.padBottom = static_cast<int32_t>(rng.uniformInt(0, p.kernelH - 1));
    p.padLeft = static_cast<int32_t>(rng.uniformInt(0, p.kernelW - 1));
    p.padRight = static_cast<int32_t>(rng.uniformInt(0, p.kernelW - 1));
    p.countIncludePad = rng.coin();
    p.ceilMode = rng.coin();
    const Dims x = makeDims(
        {rng.uniformInt(1, 2), rng.uniformInt(1, 3), rng.uniformInt(1, 9), rng.uniformInt(1, 9)});
    std::vector<TensorShape> out;
    if (!ops::Pooling::infer(p, {{x, DataType::kFLOAT}}, out).isOk()) continue;  // kernel > input
    const std::vector<float> xv = rng.values(count(x));
    SCOPED_TRACE("case " + std::to_string(i));
    expectNear(runPool(p, x, xv), oracle(p, x, out[0].dims, xv));
    if (HasFailure()) return;
  }
}

TEST(PoolingReference, DeclinesWithReasons) {
  const KernelConfig good = poolConfig(window(PoolingType::kMAX, 2, 2), makeDims({1, 1, 4, 4}));
  const Tactic& ref = *findTactic(ops::Pooling::cpuTactics(), "reference");
  EXPECT_STREQ(ops::Pooling::cpuTactics().back().name, "reference");
  std::string why;
  KernelConfig c = good;
  c.inputs[0].type = DataType::kBF16;
  EXPECT_FALSE(ref.create(c, &why));
  EXPECT_NE(why.find("bf16"), std::string::npos) << why;
  c = good;
  c.outputs[0].dims.d[2] = 3;
  why.clear();
  EXPECT_FALSE(ref.create(c, &why));
  EXPECT_FALSE(why.empty());
  c = good;
  c.inputs.push_back(c.inputs[0]);
  why.clear();
  EXPECT_FALSE(ref.create(c, &why));
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace kiln::testing
