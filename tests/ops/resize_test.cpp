// Resize: its shape rule and its CPU reference: ONNX backend test vectors (nearest with each
// rounding, linear with each coordinate transform), random shapes against a plain bilinear /
// nearest loop, N-linear on every axis, degenerate scales, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(SpatialInfer, Resize) {
  ResizeParams p;
  p.outputDims = makeDims({1, 3, 8, 9});
  const auto y = inferLayerOk(LayerType::kRESIZE, p, {typed({1, 3, 4, 4}, DataType::kHALF)});
  EXPECT_EQ(y.dims, p.outputDims);
  EXPECT_EQ(y.type, DataType::kHALF);
  EXPECT_MENTIONS(inferLayerError(LayerType::kRESIZE, p, {f32({3, 4, 4})}), "rank");
  p.outputDims = makeDims({1, 3, 0, 9});
  EXPECT_MENTIONS(inferLayerError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "must be > 0");
  p.outputDims = makeDims({1, 3, 8, 9});
  p.scales[2] = -1.f;
  EXPECT_MENTIONS(inferLayerError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "scale of axis 2");
  p.scales[2] = 0.f;
  EXPECT_MENTIONS(inferLayerError(LayerType::kRESIZE, p, {typed({1, 3, 4, 4}, DataType::kINT32)}),
                  "int32");
  p.mode = static_cast<ResizeMode>(7);
  EXPECT_MENTIONS(inferLayerError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "mode");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

ResizeParams params(ResizeMode mode, ResizeCoordinates coords, ResizeRounding rounding,
                    const Dims& out, std::vector<float> scales) {
  ResizeParams p;
  p.mode = mode;
  p.coordinates = coords;
  p.rounding = rounding;
  p.outputDims = out;
  for (size_t i = 0; i < scales.size(); ++i) p.scales[i] = scales[i];
  return p;
}

std::vector<float> resize(const ResizeParams& p, const Dims& in, const std::vector<float>& x) {
  return runReference(LayerType::kRESIZE, &ops::Resize::infer, p, ops::Resize::cpuTactics(), {in},
                      {x.data()});
}

std::vector<float> iota16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i + 1);
  return v;
}

TEST(ResizeOnnx, UpsampleScalesLinearHalfPixel) {
  const auto p = params(ResizeMode::kLINEAR, ResizeCoordinates::kHALF_PIXEL,
                        ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 4, 4}), {1, 1, 2, 2});
  expectNearScaled(
      resize(p, makeDims({1, 1, 2, 2}), {1, 2, 3, 4}),
      {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0},
      1e-6, "test_resize_upsample_scales_linear");
}

TEST(ResizeOnnx, UpsampleScalesLinearAlignCorners) {
  const auto p = params(ResizeMode::kLINEAR, ResizeCoordinates::kALIGN_CORNERS,
                        ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 4, 4}), {1, 1, 2, 2});
  expectNearScaled(resize(p, makeDims({1, 1, 2, 2}), {1, 2, 3, 4}),
                   {1.0, 1.3333334, 1.6666666, 2.0, 1.6666666, 2.0, 2.3333333, 2.6666667, 2.3333333,
                    2.6666667, 3.0, 3.3333333, 3.0, 3.3333333, 3.6666667, 4.0},
                   1e-6, "test_resize_upsample_scales_linear_align_corners");
}

TEST(ResizeOnnx, DownsampleScalesLinear) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  auto p = params(ResizeMode::kLINEAR, ResizeCoordinates::kHALF_PIXEL,
                  ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 1, 2}), {1, 1, .6f, .6f});
  expectNearScaled(resize(p, makeDims({1, 1, 2, 4}), x), {2.6666665, 4.333333}, 1e-6,
                   "test_resize_downsample_scales_linear");
  // The resized length of align_corners is input * scale, unrounded (2.4, not 2).
  p.coordinates = ResizeCoordinates::kALIGN_CORNERS;
  expectNearScaled(resize(p, makeDims({1, 1, 2, 4}), x), {1.0, 3.1428571}, 1e-6,
                   "test_resize_downsample_scales_linear_align_corners");
}

TEST(ResizeOnnx, DownsampleSizesLinearPytorchHalfPixel) {
  // Sizes [3, 1]: scales are output / input; a length-1 axis reads coordinate 0.
  const auto p =
      params(ResizeMode::kLINEAR, ResizeCoordinates::kPYTORCH_HALF_PIXEL,
             ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 3, 1}), {1, 1, 0.75f, 0.25f});
  expectNearScaled(resize(p, makeDims({1, 1, 4, 4}), iota16()), {1.6666666, 7.0, 12.333333}, 1e-6,
                   "test_resize_downsample_sizes_linear_pytorch_half_pixel");
}

TEST(ResizeOnnx, DownsampleNearest) {
  auto p = params(ResizeMode::kNEAREST, ResizeCoordinates::kHALF_PIXEL,
                  ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 1, 2}), {1, 1, .6f, .6f});
  expectNearScaled(resize(p, makeDims({1, 1, 2, 4}), {1, 2, 3, 4, 5, 6, 7, 8}), {1, 3}, 0,
                   "test_resize_downsample_scales_nearest");
  p = params(ResizeMode::kNEAREST, ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN,
             ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 3, 2}), {1, 1, .75f, .5f});
  expectNearScaled(resize(p, makeDims({1, 1, 4, 4}), iota16()), {6, 8, 10, 12, 14, 16}, 0,
                   "test_resize_downsample_sizes_nearest_tf_half_pixel_for_nn");
}

TEST(ResizeOnnx, UpsampleNearestRoundings) {
  const Dims in = makeDims({1, 1, 4, 4}), out = makeDims({1, 1, 8, 8});
  // Each row of the expected output, by input row/column index per output index.
  auto expand = [](const std::vector<int>& idx) {
    std::vector<double> r;
    for (int i : idx)
      for (int j : idx) r.push_back(i * 4 + j + 1);
    return r;
  };
  auto p = params(ResizeMode::kNEAREST, ResizeCoordinates::kHALF_PIXEL, ResizeRounding::kCEIL, out,
                  {1, 1, 2, 2});
  expectNearScaled(resize(p, in, iota16()), expand({0, 1, 1, 2, 2, 3, 3, 3}), 0,
                   "test_resize_upsample_sizes_nearest_ceil_half_pixel");
  p = params(ResizeMode::kNEAREST, ResizeCoordinates::kALIGN_CORNERS, ResizeRounding::kFLOOR, out,
             {1, 1, 2, 2});
  expectNearScaled(resize(p, in, iota16()), expand({0, 0, 0, 1, 1, 2, 2, 3}), 0,
                   "test_resize_upsample_sizes_nearest_floor_align_corners");
  p = params(ResizeMode::kNEAREST, ResizeCoordinates::kASYMMETRIC,
             ResizeRounding::kROUND_PREFER_CEIL, out, {1, 1, 2, 2});
  expectNearScaled(resize(p, in, iota16()), expand({0, 1, 1, 2, 2, 3, 3, 3}), 0,
                   "test_resize_upsample_sizes_nearest_round_prefer_ceil_asymmetric");
  // Same but preferring floor: x/2 = 0.5 rounds to 0, 1.5 to 1, 2.5 to 2.
  p.rounding = ResizeRounding::kROUND_PREFER_FLOOR;
  expectNearScaled(resize(p, in, iota16()), expand({0, 0, 1, 1, 2, 2, 3, 3}), 0,
                   "round_prefer_floor asymmetric");
}

TEST(ResizeOnnx, UpsampleScalesNearest) {
  const auto p = params(ResizeMode::kNEAREST, ResizeCoordinates::kHALF_PIXEL,
                        ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 1, 4, 6}), {1, 1, 2, 3});
  expectNearScaled(resize(p, makeDims({1, 1, 2, 2}), {1, 2, 3, 4}),
                   {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, 0,
                   "test_resize_upsample_scales_nearest");
}

// Independent of the kernel's tables: the ONNX formulas, written out per element.
double sourceCoord(ResizeCoordinates m, int64_t x, int64_t in, int64_t out, double s) {
  if (m == ResizeCoordinates::kHALF_PIXEL) return (x + 0.5) / s - 0.5;
  if (m == ResizeCoordinates::kASYMMETRIC) return x / s;
  if (m == ResizeCoordinates::kALIGN_CORNERS) return out == 1 ? 0 : x * (in - 1.0) / (in * s - 1);
  if (m == ResizeCoordinates::kPYTORCH_HALF_PIXEL) return out > 1 ? (x + 0.5) / s - 0.5 : 0;
  return (x + 0.5) / s;
}

TEST(ResizeKernel, RandomBilinearAgainstLoop) {
  Rng rng;
  for (int iter = 0; iter < 30; ++iter) {
    const Dims in = makeDims(
        {rng.uniformInt(1, 2), rng.uniformInt(1, 3), rng.uniformInt(1, 7), rng.uniformInt(1, 7)});
    const auto coords = static_cast<ResizeCoordinates>(rng.uniformInt(0, 4));
    const float sh = rng.uniformFloat(0.3f, 3.f), sw = rng.uniformFloat(0.3f, 3.f);
    Dims out = in;
    out.d[2] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(in.d[2] * sh)));
    out.d[3] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(in.d[3] * sw)));
    const auto p = params(ResizeMode::kLINEAR, coords, ResizeRounding::kROUND_PREFER_FLOOR, out,
                          {1, 1, sh, sw});
    const auto x = rng.floats(volume(in));
    const auto y = resize(p, in, x);
    ASSERT_EQ(y.size(), static_cast<size_t>(volume(out)));
    const int64_t H = in.d[2], W = in.d[3];
    size_t i = 0;
    for (int64_t nc = 0; nc < in.d[0] * in.d[1]; ++nc)
      for (int64_t oy = 0; oy < out.d[2]; ++oy)
        for (int64_t ox = 0; ox < out.d[3]; ++ox, ++i) {
          const double fy = std::clamp(sourceCoord(coords, oy, H, out.d[2], sh), 0.0, H - 1.0);
          const double fx = std::clamp(sourceCoord(coords, ox, W, out.d[3], sw), 0.0, W - 1.0);
          const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
          const int64_t y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
          const double ly = fy - y0, lx = fx - x0;
          const float* p0 = x.data() + nc * H * W;
          const double want = (1 - ly) * ((1 - lx) * p0[y0 * W + x0] + lx * p0[y0 * W + x1]) +
                              ly * ((1 - lx) * p0[y1 * W + x0] + lx * p0[y1 * W + x1]);
          ASSERT_NEAR(y[i], want, 1e-5)
              << "at " << i << ", mode " << static_cast<int>(coords) << ", " << rng.trace();
        }
  }
}

TEST(ResizeKernel, RandomNearestAgainstLoop) {
  Rng rng;
  for (int iter = 0; iter < 30; ++iter) {
    const Dims in = makeDims({rng.uniformInt(1, 3), rng.uniformInt(1, 6), rng.uniformInt(1, 6)});
    const auto coords = static_cast<ResizeCoordinates>(rng.uniformInt(0, 4));
    const auto rounding = static_cast<ResizeRounding>(rng.uniformInt(0, 3));
    std::vector<float> s(3);
    Dims out = in;
    for (int a = 0; a < 3; ++a) {
      // Half-integer factors give exact ties, which the rounding modes must settle.
      s[a] = static_cast<float>(rng.uniformInt(1, 8)) * 0.5f;
      out.d[a] = std::max<int64_t>(1, static_cast<int64_t>(std::floor(in.d[a] * s[a])));
    }
    const auto p = params(ResizeMode::kNEAREST, coords, rounding, out, s);
    const auto x = rng.floats(volume(in));
    const auto y = resize(p, in, x);
    ASSERT_EQ(y.size(), static_cast<size_t>(volume(out)));
    auto pick = [&](int a, int64_t o) {
      const double c = sourceCoord(coords, o, in.d[a], out.d[a], s[a]);
      double r;
      switch (rounding) {
        case ResizeRounding::kROUND_PREFER_FLOOR:
          r = std::ceil(c - 0.5);
          break;
        case ResizeRounding::kROUND_PREFER_CEIL:
          r = std::floor(c + 0.5);
          break;
        case ResizeRounding::kFLOOR:
          r = std::floor(c);
          break;
        default:
          r = std::ceil(c);
      }
      return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in.d[a] - 1);
    };
    size_t i = 0;
    for (int64_t a = 0; a < out.d[0]; ++a)
      for (int64_t b = 0; b < out.d[1]; ++b)
        for (int64_t c = 0; c < out.d[2]; ++c, ++i)
          ASSERT_EQ(y[i], x[(pick(0, a) * in.d[1] + pick(1, b)) * in.d[2] + pick(2, c)])
              << "at " << i << ", " << rng.trace();
  }
}

TEST(ResizeKernel, TrilinearOverEveryChangedAxis) {
  // [2,2,2] -> [3,3,3] align_corners: the centre is the mean of all 8 corners.
  Rng rng;
  const auto x = rng.floats(8);
  const auto p =
      params(ResizeMode::kLINEAR, ResizeCoordinates::kALIGN_CORNERS,
             ResizeRounding::kROUND_PREFER_FLOOR, makeDims({3, 3, 3}), {1.5f, 1.5f, 1.5f});
  const auto y = resize(p, makeDims({2, 2, 2}), x);
  ASSERT_EQ(y.size(), 27u);
  double mean = 0;
  for (float v : x) mean += v / 8.0;
  EXPECT_NEAR(y[13], mean, 1e-5) << rng.trace();
  EXPECT_EQ(y[0], x[0]) << rng.trace();
  EXPECT_EQ(y[26], x[7]) << rng.trace();
  EXPECT_NEAR(y[1], 0.5 * (x[0] + x[1]), 1e-6) << rng.trace();  // along the last axis only
  EXPECT_NEAR(y[9], 0.5 * (x[0] + x[4]), 1e-6) << rng.trace();  // along the first axis only
}

TEST(ResizeKernel, ZeroScaleMeansOutputOverInput) {
  Rng rng;
  const auto x = rng.floats(2 * 3);
  auto p = params(ResizeMode::kLINEAR, ResizeCoordinates::kHALF_PIXEL,
                  ResizeRounding::kROUND_PREFER_FLOOR, makeDims({2, 5}), {0.f, 0.f});
  const auto a = resize(p, makeDims({2, 3}), x);
  p.scales[0] = 1.f;
  p.scales[1] = 5.f / 3.f;
  const auto b = resize(p, makeDims({2, 3}), x);
  ASSERT_EQ(a.size(), 10u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << rng.trace();
}

TEST(ResizeKernel, DeclinesNonFloatAndChannelsLast) {
  const auto p = params(ResizeMode::kNEAREST, ResizeCoordinates::kHALF_PIXEL,
                        ResizeRounding::kROUND_PREFER_FLOOR, makeDims({1, 2, 4, 4}), {1, 1, 2, 2});
  const Dims in = makeDims({1, 2, 2, 2});
  auto c = config(LayerType::kRESIZE, p, {desc(in, DataType::kHALF)},
                  {desc(p.outputDims, DataType::kHALF)});
  EXPECT_NE(declines(tacticNamed(ops::Resize::cpuTactics(), "reference"), c).find("fp32"),
            std::string::npos);
  c = config(LayerType::kRESIZE, p, {desc(in, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
             {desc(p.outputDims, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  declines(tacticNamed(ops::Resize::cpuTactics(), "reference"), c);
  // Output dims that disagree with the params are refused (a corrupted plan).
  c = config(LayerType::kRESIZE, p, {desc(in)}, {desc(makeDims({1, 2, 4, 5}))});
  declines(tacticNamed(ops::Resize::cpuTactics(), "reference"), c);
}

// align_corners with input * scale == 1 divides by zero; a plan may carry such a scale beside
// any output size. Every output then reads element 0 (linear and nearest), never a NaN index.
TEST(ResizeDegenerate, AlignCornersWithInputTimesScaleOneReadsElementZero) {
  for (ResizeMode mode : {ResizeMode::kLINEAR, ResizeMode::kNEAREST}) {
    const auto p =
        params(mode, ResizeCoordinates::kALIGN_CORNERS, ResizeRounding::kROUND_PREFER_FLOOR,
               makeDims({1, 1, 1, 3}), {1, 1, 1, 0.5f});
    expectNearScaled(resize(p, makeDims({1, 1, 1, 2}), {7, 9}), {7, 7, 7}, 0,
                     "degenerate align_corners");
  }
}

}  // namespace
}  // namespace kiln::testing
