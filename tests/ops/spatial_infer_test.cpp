// Shape inference of resize, deconvolution, instance normalisation, LRN and RoiAlign: the shapes
// they give and the errors they report.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_table.h"

namespace kiln {
namespace {

TensorShape f32(std::initializer_list<int64_t> d) { return {makeDims(d), DataType::kFLOAT}; }
TensorShape typed(std::initializer_list<int64_t> d, DataType t) { return {makeDims(d), t}; }

template <class P>
std::string inferError(LayerType type, const P& p, const std::vector<TensorShape>& in) {
  std::vector<TensorShape> out;
  const Status st = inferLayerOutputs(type, p, in, out);
  EXPECT_FALSE(st.isOk()) << "accepted";
  return st.message();
}

template <class P>
TensorShape inferOk(LayerType type, const P& p, const std::vector<TensorShape>& in) {
  std::vector<TensorShape> out;
  const Status st = inferLayerOutputs(type, p, in, out);
  EXPECT_TRUE(st.isOk()) << st.toString();
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? TensorShape{} : out[0];
}

#define EXPECT_MENTIONS(text, what) EXPECT_NE((text).find(what), std::string::npos) << (text)

TEST(SpatialInfer, Resize) {
  ResizeParams p;
  p.outputDims = makeDims({1, 3, 8, 9});
  const auto y = inferOk(LayerType::kRESIZE, p, {typed({1, 3, 4, 4}, DataType::kHALF)});
  EXPECT_EQ(y.dims, p.outputDims);
  EXPECT_EQ(y.type, DataType::kHALF);
  EXPECT_MENTIONS(inferError(LayerType::kRESIZE, p, {f32({3, 4, 4})}), "rank");
  p.outputDims = makeDims({1, 3, 0, 9});
  EXPECT_MENTIONS(inferError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "must be > 0");
  p.outputDims = makeDims({1, 3, 8, 9});
  p.scales[2] = -1.f;
  EXPECT_MENTIONS(inferError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "scale of axis 2");
  p.scales[2] = 0.f;
  EXPECT_MENTIONS(inferError(LayerType::kRESIZE, p, {typed({1, 3, 4, 4}, DataType::kINT32)}),
                  "int32");
  p.mode = static_cast<ResizeMode>(7);
  EXPECT_MENTIONS(inferError(LayerType::kRESIZE, p, {f32({1, 3, 4, 4})}), "mode");
}

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
      inferOk(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2}), f32({6})});
  EXPECT_EQ(y.dims, makeDims({2, 6, 11, 7}));
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 6, 3, 2})}),
                  "weights");
  EXPECT_MENTIONS(
      inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2}), f32({3})}),
      "bias");
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 3, 5, 4}), f32({3, 3, 3, 2})}),
                  "groups");
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5}), f32({4, 3, 3, 2})}),
                  "[N,C,H,W]");
  p.padLeft = p.padRight = 4;
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
                  "output extent along W");
  p.padLeft = p.padRight = 0;
  p.strideW = 0;
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
                  "strideW");
  p.strideW = 1;
  p.outputPaddingW = -1;
  EXPECT_MENTIONS(inferError(LayerType::kDECONVOLUTION, p, {f32({2, 4, 5, 4}), f32({4, 3, 3, 2})}),
                  "output padding");
}

TEST(SpatialInfer, NormalizationAndLrn) {
  NormalizationParams n;
  EXPECT_EQ(inferOk(LayerType::kNORMALIZATION, n, {f32({2, 3, 4, 5}), f32({3}), f32({3})}).dims,
            makeDims({2, 3, 4, 5}));
  EXPECT_MENTIONS(inferError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4, 5}), f32({4}), f32({3})}),
                  "scale");
  EXPECT_MENTIONS(inferError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4}), f32({3})}), "3 input");
  EXPECT_MENTIONS(inferError(LayerType::kNORMALIZATION, n, {f32({3}), f32({3}), f32({3})}),
                  "rank >= 2");
  n.epsilon = -1.f;
  EXPECT_MENTIONS(inferError(LayerType::kNORMALIZATION, n, {f32({2, 3, 4}), f32({3}), f32({3})}),
                  "epsilon");
  LRNParams l;
  EXPECT_EQ(inferOk(LayerType::kLRN, l, {f32({1, 5, 2, 2})}).dims, makeDims({1, 5, 2, 2}));
  l.size = 0;
  EXPECT_MENTIONS(inferError(LayerType::kLRN, l, {f32({1, 5, 2, 2})}), "size");
  l.size = 3;
  EXPECT_MENTIONS(inferError(LayerType::kLRN, l, {typed({1, 5}, DataType::kINT64)}), "int64");
}

TEST(SpatialInfer, RoiAlign) {
  RoiAlignParams p;
  p.outputHeight = 7;
  p.outputWidth = 5;
  const auto y = inferOk(LayerType::kROI_ALIGN, p,
                         {f32({2, 8, 16, 16}), f32({10, 4}), typed({10}, DataType::kINT64)});
  EXPECT_EQ(y.dims, makeDims({10, 8, 7, 5}));
  EXPECT_EQ(inferOk(LayerType::kROI_ALIGN, p,
                    {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)})
                .dims,
            makeDims({3, 8, 7, 5}));
  EXPECT_MENTIONS(
      inferError(LayerType::kROI_ALIGN, p, {f32({2, 8, 16, 16}), f32({3, 4}), f32({3})}),
      "batch_indices");
  EXPECT_MENTIONS(inferError(LayerType::kROI_ALIGN, p,
                             {f32({2, 8, 16, 16}), f32({3, 5}), typed({3}, DataType::kINT32)}),
                  "rois");
  EXPECT_MENTIONS(inferError(LayerType::kROI_ALIGN, p,
                             {f32({2, 8, 16, 16}), f32({3, 4}), typed({4}, DataType::kINT32)}),
                  "one per roi");
  p.samplingRatio = -1;
  EXPECT_MENTIONS(inferError(LayerType::kROI_ALIGN, p,
                             {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)}),
                  "sampling ratio");
  p.samplingRatio = 0;
  p.outputWidth = 0;
  EXPECT_MENTIONS(inferError(LayerType::kROI_ALIGN, p,
                             {f32({2, 8, 16, 16}), f32({3, 4}), typed({3}, DataType::kINT32)}),
                  "output size");
}

}  // namespace
}  // namespace kiln
