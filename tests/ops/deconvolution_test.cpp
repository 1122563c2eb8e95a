// Deconvolution (transposed convolution): its shape rule and its CPU tactics: ONNX backend test
// vectors and random configurations against a scatter-add loop (the kernels gather, so the two
// share no indexing), sgemm_col2im against the reference, and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(SpatialInfer, Deconvolution) {
  DeconvolutionParams p;
  p.outChannels = 6;
  p.groups = 2;
  p.kernelH = 3;
  p.kernelW = 2;
  p.strideH = 2;
  p.padTop = 1;
  p.outputPaddingH = 1;
  p.dilationW = 3;
  // OH = 2*(5-1) + 1 + 1*(3-1) + 1 - 1 = 11; OW = 1*(4-1) + 3*(2-1) + 1 = 7.
  const auto y =
      inferLayerOk(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2}), f32({6})});
  EXPECT_EQ(y.dims, makeDims({2, 6, 11, 7}));
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 6, 3, 2})}),
      "weights");
  EXPECT_MENTIONS(inferLayerError(LayerType::kDECONVOLUTION, p,
                                  {f32({2, 4, 5, 4}), f32({4, 3, 3, 2}), f32({3})}),
                  "bias");
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 3, 5, 4}), f32({3, 3, 3, 2})}),
      "groups");
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5}), f32({4, 3, 3, 2})}),
      "[N,C,H,W]");
  p.padLeft = p.padRight = 4;
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
      "output extent along W");
  p.padLeft = p.padRight = 0;
  p.strideW = 0;
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
      "strideW");
  p.strideW = 1;
  p.outputPaddingW = -1;
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
      "output padding");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::vector<float> deconv(const DeconvolutionParams& p, const std::vector<Dims>& dims,
                          const std::vector<const void*>& data) {
  return runReference(LayerType::kDECONVOLUTION, &ops::Deconvolution::infer, p,
                      ops::Deconvolution::cpuTactics(), dims, data);
}

const std::vector<float> kX9 = {0, 1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> kOnes18(18, 1.f);

TEST(DeconvOnnx, Default) {
  DeconvolutionParams p;
  p.outChannels = 2;
  p.kernelH = p.kernelW = 3;
  const std::vector<double> plane = {0,  1,  3, 3,  2,  3,  8,  15, 12, 7,  9,  21, 36,
                                     27, 15, 9, 20, 33, 24, 13, 6,  13, 21, 15, 8};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  expectNearScaled(
      deconv(p, {makeDims({1, 1, 3, 3}), makeDims({1, 2, 3, 3})}, {kX9.data(), kOnes18.data()}),
      want, 0, "test_convtranspose");
}

TEST(DeconvOnnx, StridesAndPads) {
  DeconvolutionParams p;
  p.outChannels = 2;
  p.kernelH = p.kernelW = 3;
  p.strideH = 3;
  p.strideW = 2;
  p.padTop = p.padBottom = 1;
  p.padLeft = p.padRight = 2;
  const std::vector<double> plane = {1, 1, 3, 1, 1,  3, 7,  4,  9, 7, 4,
                                     9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  expectNearScaled(
      deconv(p, {makeDims({1, 1, 3, 3}), makeDims({1, 2, 3, 3})}, {kX9.data(), kOnes18.data()}),
      want, 0, "test_convtranspose_pads");
}

TEST(DeconvOnnx, OutputPadding) {
  // test_convtranspose_kernel_shape: strides (3, 2), output_padding (1, 1), output 10 x 8.
  DeconvolutionParams p;
  p.outChannels = 2;
  p.kernelH = p.kernelW = 3;
  p.strideH = 3;
  p.strideW = 2;
  p.outputPaddingH = p.outputPaddingW = 1;
  const std::vector<std::vector<double>> rows = {
      {0, 0, 1, 1, 3, 2, 2, 0}, {3, 3, 7, 4, 9, 5, 5, 0}, {6, 6, 13, 7, 15, 8, 8, 0}};
  std::vector<double> plane;
  for (int r = 0; r < 9; ++r) plane.insert(plane.end(), rows[r / 3].begin(), rows[r / 3].end());
  plane.insert(plane.end(), 8, 0.0);
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  expectNearScaled(
      deconv(p, {makeDims({1, 1, 3, 3}), makeDims({1, 2, 3, 3})}, {kX9.data(), kOnes18.data()}),
      want, 0, "test_convtranspose_kernel_shape");
}

TEST(DeconvOnnx, Dilations) {
  DeconvolutionParams p;
  p.outChannels = 1;
  p.kernelH = p.kernelW = 2;
  p.dilationH = p.dilationW = 2;
  const std::vector<float> x = {3, 8, 1, 9, 5, 7, 3, 2, 6}, w = {7, 2, 1, 9};
  expectNearScaled(
      deconv(p, {makeDims({1, 1, 3, 3}), makeDims({1, 1, 2, 2})}, {x.data(), w.data()}),
      {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
       76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54},
      0, "test_convtranspose_dilations");
}

TEST(DeconvKernel, RandomAgainstScatterLoop) {
  Rng rng;
  for (int iter = 0; iter < 25; ++iter) {
    DeconvolutionParams p;
    p.groups = static_cast<int32_t>(rng.uniformInt(1, 3));
    const int64_t cg = rng.uniformInt(1, 3), mg = rng.uniformInt(1, 3);
    const int64_t C = cg * p.groups;
    p.outChannels = static_cast<int32_t>(mg * p.groups);
    p.kernelH = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.kernelW = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.strideH = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.strideW = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.dilationH = static_cast<int32_t>(rng.uniformInt(1, 2));
    p.dilationW = static_cast<int32_t>(rng.uniformInt(1, 2));
    p.outputPaddingH = static_cast<int32_t>(rng.uniformInt(0, p.strideH - 1));
    p.outputPaddingW = static_cast<int32_t>(rng.uniformInt(0, p.strideW - 1));
    p.padTop = static_cast<int32_t>(rng.uniformInt(0, p.kernelH - 1));
    p.padBottom = static_cast<int32_t>(rng.uniformInt(0, p.kernelH - 1));
    p.padLeft = static_cast<int32_t>(rng.uniformInt(0, p.kernelW - 1));
    p.padRight = static_cast<int32_t>(rng.uniformInt(0, p.kernelW - 1));
    const int64_t N = rng.uniformInt(1, 2), H = rng.uniformInt(1, 5), W = rng.uniformInt(1, 5);
    const bool bias = rng.uniformInt(0, 1) == 1;
    const int64_t OH = p.strideH * (H - 1) + p.outputPaddingH + p.dilationH * (p.kernelH - 1) + 1 -
                       p.padTop - p.padBottom;
    const int64_t OW = p.strideW * (W - 1) + p.outputPaddingW + p.dilationW * (p.kernelW - 1) + 1 -
                       p.padLeft - p.padRight;
    if (OH < 1 || OW < 1) continue;
    const auto x = rng.floats(N * C * H * W);
    const auto w = rng.floats(C * mg * p.kernelH * p.kernelW);
    const auto b = rng.floats(p.outChannels);
    std::vector<Dims> dims = {makeDims({N, C, H, W}), makeDims({C, mg, p.kernelH, p.kernelW})};
    std::vector<const void*> data = {x.data(), w.data()};
    if (bias) {
      dims.push_back(makeDims({p.outChannels}));
      data.push_back(b.data());
    }
    const auto y = deconv(p, dims, data);
    ASSERT_EQ(y.size(), static_cast<size_t>(N * p.outChannels * OH * OW)) << rng.trace();
    std::vector<double> want(y.size(), 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw)
            for (int64_t m = 0; m < mg; ++m)
              for (int64_t kh = 0; kh < p.kernelH; ++kh)
                for (int64_t kw = 0; kw < p.kernelW; ++kw) {
                  const int64_t oh = ih * p.strideH - p.padTop + kh * p.dilationH;
                  const int64_t ow = iw * p.strideW - p.padLeft + kw * p.dilationW;
                  if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                  const int64_t k = (c / cg) * mg + m;
                  want[((n * p.outChannels + k) * OH + oh) * OW + ow] +=
                      static_cast<double>(x[((n * C + c) * H + ih) * W + iw]) *
                      w[((c * mg + m) * p.kernelH + kh) * p.kernelW + kw];
                }
    if (bias)
      for (size_t i = 0; i < want.size(); ++i)
        want[i] += b[(i / static_cast<size_t>(OH * OW)) % static_cast<size_t>(p.outChannels)];
    expectNearScaled(y, want, 1e-5, rng.trace());
  }
}

TEST(DeconvKernel, SgemmCol2imMatchesReference) {
  Rng rng;
  const auto& fast = tacticNamed(ops::Deconvolution::cpuTactics(), "sgemm_col2im");
  const auto& ref = tacticNamed(ops::Deconvolution::cpuTactics(), "reference");
  for (int iter = 0; iter < 16; ++iter) {
    DeconvolutionParams p;
    p.groups = static_cast<int32_t>(rng.uniformInt(1, 2));
    const int64_t cg = rng.uniformInt(1, 6), mg = rng.uniformInt(1, 6);
    const int64_t C = cg * p.groups;
    p.outChannels = static_cast<int32_t>(mg * p.groups);
    p.kernelH = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.kernelW = static_cast<int32_t>(rng.uniformInt(1, 4));
    p.strideH = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.strideW = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.dilationH = static_cast<int32_t>(rng.uniformInt(1, 2));
    p.dilationW = static_cast<int32_t>(rng.uniformInt(1, 2));
    p.outputPaddingH = static_cast<int32_t>(rng.uniformInt(0, p.strideH - 1));
    p.outputPaddingW = static_cast<int32_t>(rng.uniformInt(0, p.strideW - 1));
    p.padTop = static_cast<int32_t>(rng.uniformInt(0, p.kernelH - 1));
    p.padLeft = static_cast<int32_t>(rng.uniformInt(0, p.kernelW - 1));
    // Enough pixels, at times, for several column tiles.
    const int64_t N = rng.uniformInt(1, 2), H = rng.uniformInt(1, 40), W = rng.uniformInt(1, 40);
    const bool bias = rng.uniformInt(0, 1) == 1;
    std::vector<PluginTensorDesc> in = {desc(makeDims({N, C, H, W})),
                                        desc(makeDims({C, mg, p.kernelH, p.kernelW}))};
    if (bias) in.push_back(desc(makeDims({p.outChannels})));
    const auto out = inferredOutputs(&ops::Deconvolution::infer, p, in);
    ASSERT_EQ(out.size(), 1u) << rng.trace();
    const auto x = rng.floats(volume(in[0].dims));
    const auto w = rng.floats(volume(in[1].dims));
    const auto b = rng.floats(p.outChannels);
    auto c = config(LayerType::kDECONVOLUTION, p, in, out);
    const bool constantWeights = rng.uniformInt(0, 1) == 1;
    if (constantWeights) c.constantInputs[1] = w.data();
    auto kf = create(fast, c);
    auto kr = create(ref, c);
    ASSERT_TRUE(kf && kr);
    const size_t n = static_cast<size_t>(volume(out[0].dims));
    std::vector<float> yf(n, std::nanf("")), yr(n, std::nanf(""));
    std::vector<const void*> data = {x.data(), w.data(), b.data()};
    data.resize(in.size());
    ASSERT_TRUE(runKernel(*kf, data, {yf.data()}).isOk());
    ASSERT_TRUE(runKernel(*kr, data, {yr.data()}).isOk());
    const double tol = 1e-5 * static_cast<double>(cg * p.kernelH * p.kernelW);
    for (size_t i = 0; i < n; ++i)
      ASSERT_NEAR(yf[i], yr[i], tol * (1 + std::fabs(yr[i])))
          << "at " << i << (constantWeights ? ", constant weights, " : ", ") << rng.trace();
  }
}

TEST(DeconvKernel, DeclinesFp16) {
  DeconvolutionParams p;
  p.outChannels = 1;
  const Dims x = makeDims({1, 1, 2, 2}), w = makeDims({1, 1, 1, 1});
  auto c = config(LayerType::kDECONVOLUTION, p,
                  {desc(x, DataType::kHALF), desc(w, DataType::kHALF)}, {desc(x, DataType::kHALF)});
  for (const auto& t : ops::Deconvolution::cpuTactics()) declines(t, c);
}

}  // namespace
}  // namespace kiln::testing
