// RoiAlign: its shape rule and its CPU reference: the ONNX backend test vectors in both coordinate
// modes, hand-computed average and max bins, NaN in the max, adaptive sampling, int32 and int64
// batch indices, and bad batch indices and RoIs at run time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(SpatialInfer, RoiAlign) {
  RoiAlignParams p;
  p.outputHeight = 7;
  p.outputWidth = 5;
  const auto y = inferLayerOk(LayerType::kROI_ALIGN, p,
                              {f32({2, 8, 16, 16}), f32({10, 4}), typed({10}, DataType::kINT64)});
  EXPECT_EQ(y.dims, makeDims({10, 8, 7, 5}));
  EXPECT_EQ(inferLayerOk(LayerType::kROI_ALIGN, p,
                         {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)})
                .dims,
            makeDims({3, 8, 7, 5}));
  EXPECT_MENTIONS(
      inferLayerError(LayerType::kROI_ALIGN, p, {f32({2, 8, 16, 16}), f32({3, 4}), f32({3})}),
      "batch_indices");
  EXPECT_MENTIONS(inferLayerError(LayerType::kROI_ALIGN, p,
                                  {f32({2, 8, 16, 16}), f32({3, 5}), typed({3}, DataType::kINT32)}),
                  "rois");
  EXPECT_MENTIONS(inferLayerError(LayerType::kROI_ALIGN, p,
                                  {f32({2, 8, 16, 16}), f32({3, 4}), typed({4}, DataType::kINT32)}),
                  "one per roi");
  p.samplingRatio = -1;
  EXPECT_MENTIONS(inferLayerError(LayerType::kROI_ALIGN, p,
                                  {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)}),
                  "sampling ratio");
  p.samplingRatio = 0;
  p.outputWidth = 0;
  EXPECT_MENTIONS(inferLayerError(LayerType::kROI_ALIGN, p,
                                  {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)}),
                  "output size");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

// ONNX backend tests test_roialign_aligned_{false,true}: X [1,1,10,10], rois [[0,0,9,9],
// [0,5,4,9], [5,5,9,9]], output 5x5, sampling_ratio 2, spatial_scale 1.
const std::vector<float> kOnnxX = {
    0.2764, 0.715,  0.1958, 0.3416, 0.4638, 0.0259, 0.2963, 0.6518, 0.4856, 0.725,  0.9637, 0.0895,
    0.2919, 0.6753, 0.0234, 0.6132, 0.8085, 0.5324, 0.8992, 0.4467, 0.3265, 0.8479, 0.9698, 0.2471,
    0.9336, 0.1878, 0.4766, 0.4308, 0.34,   0.2162, 0.0206, 0.172,  0.2155, 0.4394, 0.0653, 0.3406,
    0.7724, 0.3921, 0.2541, 0.5799, 0.4062, 0.2194, 0.4473, 0.4687, 0.7109, 0.9327, 0.9815, 0.632,
    0.1728, 0.6119, 0.3097, 0.1283, 0.4984, 0.5068, 0.4279, 0.0173, 0.4388, 0.043,  0.4671, 0.7119,
    0.1011, 0.8477, 0.4726, 0.1777, 0.9923, 0.4042, 0.1869, 0.7795, 0.9946, 0.9689, 0.1366, 0.3671,
    0.7011, 0.6234, 0.9867, 0.5585, 0.6985, 0.5609, 0.8788, 0.9928, 0.5697, 0.8511, 0.6711, 0.9406,
    0.8751, 0.7496, 0.165,  0.1049, 0.1559, 0.2514, 0.7012, 0.4056, 0.7879, 0.3461, 0.0415, 0.2998,
    0.5094, 0.3727, 0.5482, 0.0502,
};
const std::vector<double> kOnnxAlignedFalse = {
    0.4664, 0.4466, 0.3405, 0.5688, 0.6068, 0.3714, 0.4296, 0.3835, 0.5562, 0.351,  0.2768,
    0.4883, 0.5222, 0.5528, 0.4171, 0.4713, 0.4844, 0.6904, 0.492,  0.8774, 0.6239, 0.7125,
    0.6289, 0.3355, 0.3495, 0.3022, 0.4305, 0.4696, 0.3978, 0.5423, 0.3656, 0.705,  0.5165,
    0.3172, 0.7015, 0.2912, 0.5059, 0.6476, 0.6235, 0.8299, 0.5916, 0.7389, 0.7048, 0.8372,
    0.8893, 0.6227, 0.6153, 0.7097, 0.6154, 0.4585, 0.2384, 0.3379, 0.3717, 0.61,   0.7601,
    0.3767, 0.3785, 0.7147, 0.9243, 0.9727, 0.5749, 0.5826, 0.5709, 0.7619, 0.877,  0.5355,
    0.2566, 0.2141, 0.2796, 0.36,   0.4365, 0.3504, 0.2887, 0.3661, 0.2349,
};
const std::vector<double> kOnnxAlignedTrue = {
    0.5178, 0.3434, 0.3229, 0.4474, 0.6344, 0.4031, 0.5366, 0.4428, 0.4861, 0.4023, 0.2512,
    0.4002, 0.5155, 0.6954, 0.3465, 0.335,  0.4601, 0.5881, 0.3439, 0.6849, 0.4932, 0.7141,
    0.8217, 0.4719, 0.4039, 0.307,  0.2187, 0.3337, 0.488,  0.487,  0.1871, 0.4914, 0.5561,
    0.4192, 0.3686, 0.1433, 0.4608, 0.5971, 0.531,  0.4982, 0.2788, 0.4386, 0.6022, 0.7,
    0.7524, 0.5774, 0.7024, 0.7251, 0.7338, 0.8163, 0.2393, 0.4075, 0.3379, 0.2525, 0.4743,
    0.3671, 0.2702, 0.4105, 0.6419, 0.8308, 0.5556, 0.4543, 0.5564, 0.7502, 0.93,   0.6626,
    0.5617, 0.4813, 0.4954, 0.6663, 0.6636, 0.3721, 0.2056, 0.1928, 0.2478,
};

template <class Index>
std::vector<float> roiAlign(const RoiAlignParams& p, const Dims& x, const std::vector<float>& xv,
                            const std::vector<float>& rois, const std::vector<Index>& idx,
                            Status* status = nullptr) {
  const DataType t = sizeof(Index) == 8 ? DataType::kINT64 : DataType::kINT32;
  const auto r = static_cast<int64_t>(idx.size());
  return runReference(LayerType::kROI_ALIGN, &ops::RoiAlign::infer, p, ops::RoiAlign::cpuTactics(),
                      {x, makeDims({r, 4}), makeDims({r})}, {xv.data(), rois.data(), idx.data()},
                      {DataType::kFLOAT, DataType::kFLOAT, t}, status);
}

RoiAlignParams onnxParams(bool halfPixel) {
  RoiAlignParams p;
  p.outputHeight = p.outputWidth = 5;
  p.samplingRatio = 2;
  p.spatialScale = 1.f;
  p.halfPixel = halfPixel;
  return p;
}

const std::vector<float> kOnnxRois = {0, 0, 9, 9, 0, 5, 4, 9, 5, 5, 9, 9};

TEST(RoiAlignOnnx, AlignedFalseOutputHalfPixel) {
  expectNearScaled(
      roiAlign<int64_t>(onnxParams(false), makeDims({1, 1, 10, 10}), kOnnxX, kOnnxRois, {0, 0, 0}),
      kOnnxAlignedFalse, 1e-4, "test_roialign_aligned_false");
}

TEST(RoiAlignOnnx, AlignedTrueHalfPixel) {
  expectNearScaled(
      roiAlign<int64_t>(onnxParams(true), makeDims({1, 1, 10, 10}), kOnnxX, kOnnxRois, {0, 0, 0}),
      kOnnxAlignedTrue, 1e-4, "test_roialign_aligned_true");
}

TEST(RoiAlignKernel, HandComputedAverageAndMax) {
  // One 2x2 plane, one bin over the whole plane, 2x2 samples at 0.25 and 0.75. Average: every
  // pixel weighs 1/4 in total. Max (ONNX): the largest weighted corner of any sample, here
  // 0.75 * 0.75 * 4 at the sample (0.25, 0.25).
  RoiAlignParams p;
  p.samplingRatio = 2;
  p.halfPixel = false;
  const std::vector<float> x = {4, 1, 1, 2};
  const std::vector<float> roi = {0, 0, 1, 1};
  expectNearScaled(roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, roi, {0}), {2.0}, 1e-7, "avg");
  p.mode = RoiAlignMode::kMAX;
  expectNearScaled(roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, roi, {0}), {2.25}, 1e-7, "max");
  // Half-pixel shifts the roi by half a pixel: (0.5, 0.5, 1.5, 1.5) is the same box.
  p.halfPixel = true;
  const std::vector<float> shifted = {0.5f, 0.5f, 1.5f, 1.5f};
  expectNearScaled(roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, shifted, {0}), {2.25}, 1e-7,
                   "max, half pixel");
  // Spatial scale 0.5 maps (1, 1, 3, 3) onto the same box.
  p.spatialScale = 0.5f;
  const std::vector<float> scaled = {1, 1, 3, 3};
  expectNearScaled(roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, scaled, {0}), {2.25}, 1e-7,
                   "max, scale 0.5");
}

TEST(RoiAlignKernel, MaxModeNanWinsWhereverItStands) {
  // The hand-computed 2x2 case of HandComputedAverageAndMax, with a NaN at each pixel in turn:
  // every pixel carries weight in some sample, so the max is NaN whichever sample or corner
  // meets it first (onnxruntime's std::max would keep or drop it by position). Average mode
  // sums it into NaN too.
  RoiAlignParams p;
  p.samplingRatio = 2;
  p.halfPixel = false;
  const std::vector<float> roi = {0, 0, 1, 1};
  for (int at = 0; at < 4; ++at) {
    std::vector<float> x = {4, 1, 1, 2};
    x[at] = std::nanf("");
    p.mode = RoiAlignMode::kMAX;
    const auto max = roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, roi, {0});
    ASSERT_EQ(max.size(), 1u);
    EXPECT_TRUE(std::isnan(max[0])) << "max with a NaN at pixel " << at << " gave " << max[0];
    p.mode = RoiAlignMode::kAVERAGE;
    const auto avg = roiAlign<int32_t>(p, makeDims({1, 1, 2, 2}), x, roi, {0});
    ASSERT_EQ(avg.size(), 1u);
    EXPECT_TRUE(std::isnan(avg[0])) << "average with a NaN at pixel " << at;
  }
}

TEST(RoiAlignKernel, AdaptiveSamplingAndIndexTypesAndBatch) {
  Rng rng;
  const Dims xd = makeDims({3, 2, 8, 8});
  const auto x = rng.floats(volume(xd));
  std::vector<float> rois;
  for (int r = 0; r < 4; ++r) {
    // Boxes of 4x4 with 2x2 bins: adaptive sampling gives ceil(4/2) = 2 per axis.
    // Multiples of 0.5 keep x2 - x1 exactly 4.
    const float x1 = 0.5f * static_cast<float>(rng.uniformInt(0, 8));
    const float y1 = 0.5f * static_cast<float>(rng.uniformInt(0, 8));
    rois.insert(rois.end(), {x1, y1, x1 + 4.f, y1 + 4.f});
  }
  RoiAlignParams p;
  p.outputHeight = p.outputWidth = 2;
  p.halfPixel = false;
  p.samplingRatio = 2;
  const auto fixed = roiAlign<int64_t>(p, xd, x, rois, {2, 0, 1, 2});
  p.samplingRatio = 0;
  const auto adaptive = roiAlign<int32_t>(p, xd, x, rois, {2, 0, 1, 2});
  ASSERT_EQ(fixed.size(), 4u * 2 * 2 * 2);
  ASSERT_EQ(fixed, adaptive) << rng.trace();
  // Roi 0 of image 2 equals the same roi alone on a batch holding only image 2.
  const std::vector<float> image2(x.begin() + 2 * 128, x.end());
  const auto alone = roiAlign<int32_t>(p, makeDims({1, 2, 8, 8}), image2,
                                       std::vector<float>(rois.begin(), rois.begin() + 4), {0});
  ASSERT_EQ(alone.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(alone[i], fixed[i]) << rng.trace();
}

TEST(RoiAlignKernel, BadBatchIndexIsAnErrorNotARead) {
  Rng rng;
  const Dims xd = makeDims({2, 1, 4, 4});
  const auto x = rng.floats(volume(xd));
  const std::vector<float> rois = {0, 0, 2, 2, 1, 1, 3, 3};
  RoiAlignParams p;
  for (int64_t bad : {int64_t{2}, int64_t{-1}, int64_t{1} << 40}) {
    Status st;
    roiAlign<int64_t>(p, xd, x, rois, {0, bad}, &st);
    EXPECT_FALSE(st.isOk()) << bad;
    EXPECT_NE(st.message().find("batch_indices[1]"), std::string::npos) << st.toString();
  }
  Status st;
  roiAlign<int32_t>(p, xd, x, rois, {7, 0}, &st);
  EXPECT_NE(st.message().find("batch_indices[0] is 7"), std::string::npos) << st.toString();
}

TEST(RoiAlignKernel, NonFiniteOrHugeRoiIsAnError) {
  Rng rng;
  const Dims xd = makeDims({1, 1, 4, 4});
  const auto x = rng.floats(volume(xd));
  RoiAlignParams p;
  Status st;
  roiAlign<int32_t>(p, xd, x, {0, 0, std::nanf(""), 2}, {0}, &st);
  EXPECT_FALSE(st.isOk());
  roiAlign<int32_t>(p, xd, x, {0, 0, 1e30f, 1e30f}, {0}, &st);
  EXPECT_FALSE(st.isOk());
}

TEST(RoiAlignKernel, DeclinesFloatBatchIndices) {
  RoiAlignParams p;
  const auto c = config(
      LayerType::kROI_ALIGN, p,
      {desc(makeDims({1, 1, 4, 4})), desc(makeDims({1, 4})), desc(makeDims({1}), DataType::kFLOAT)},
      {desc(makeDims({1, 1, 1, 1}))});
  declines(tacticNamed(ops::RoiAlign::cpuTactics(), "reference"), c);
}

}  // namespace
}  // namespace kiln::testing
