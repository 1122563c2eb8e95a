// CropAndResize's shape, type and format functions, configuration and enqueue checks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/dim_expr.h"
#include "crop_and_resize_test_util.h"
#include "kiln/plugin_utils.h"

namespace kiln::testing {
namespace {

PluginPtr plugin(int32_t h = 3, int32_t w = 5) {
  Fields f = cropFields(h, w);
  PluginPtr p = create(f);
  EXPECT_TRUE(p) << lastError(creator());
  return p;
}

// getOutputDimensions on constant dims: the output dims, or the error text.
struct ShapeResult {
  bool ok = false;
  Dims dims;
  std::string error;
};
ShapeResult outputShape(IPlugin& p, std::vector<Dims> inputs, int32_t outputIndex = 0) {
  DimExprBuilder builder;
  std::vector<DimsExprs> exprs;
  for (const Dims& d : inputs) exprs.push_back(builder.toExprs(d));
  DimsExprs out;
  ShapeResult r;
  const int32_t status = p.getOutputDimensions(outputIndex, exprs.data(),
                                               static_cast<int32_t>(exprs.size()), builder, &out);
  r.ok = status == kPLUGIN_SUCCESS;
  if (r.ok) {
    EXPECT_TRUE(toDims(out, r.dims));
  } else {
    r.error = lastError(&p);
  }
  return r;
}

TEST(CropAndResizeShape, OutputDims) {
  PluginPtr p = plugin(3, 5);
  ShapeResult r = outputShape(*p, {makeDims({2, 7, 10, 12}), makeDims({2, 6, 4})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.dims, makeDims({2, 6, 7, 3, 5}));
  r = outputShape(*p, {makeDims({2, 7, 10, 12}), makeDims({2, 6, 4, 1})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.dims, makeDims({2, 6, 7, 3, 5}));
  r = outputShape(*p, {makeDims({2, 7, 10, 12}), makeDims({9, 4}), makeDims({9})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.dims, makeDims({9, 7, 3, 5}));
  r = outputShape(*p, {makeDims({2, 7, 10, 12}), makeDims({0, 4}), makeDims({0})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.dims, makeDims({0, 7, 3, 5}));
}

TEST(CropAndResizeShape, BadShapesAreNamed) {
  PluginPtr p = plugin();
  const Dims image = makeDims({2, 7, 10, 12});
  const struct {
    std::vector<Dims> inputs;
    const char* text;
  } cases[] = {
      {{makeDims({2, 7, 10}), makeDims({2, 6, 4})}, "feature_maps"},
      {{image, makeDims({2, 6, 5})}, "rois"},
      {{image, makeDims({2, 6, 4, 2})}, "rois"},
      {{image, makeDims({3, 6, 4})}, "disagree on N"},
      {{makeDims({2, 7, 0, 12}), makeDims({2, 6, 4})}, "height and width"},
      {{image, makeDims({9, 3}), makeDims({9})}, "boxes"},
      {{image, makeDims({9, 4}), makeDims({8})}, "disagree on K"},
      {{image, makeDims({9, 4}), makeDims({9, 1})}, "box_indices"},
      {{image}, "2 inputs"},
      {{image, makeDims({9, 4}), makeDims({9}), makeDims({9})}, "2 inputs"},
  };
  for (const auto& c : cases) {
    const ShapeResult r = outputShape(*p, c.inputs);
    EXPECT_FALSE(r.ok) << c.text;
    EXPECT_NE(r.error.find(c.text), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("crop0"), std::string::npos) << r.error;
  }
  const ShapeResult r = outputShape(*p, {image, makeDims({2, 6, 4})}, 1);
  EXPECT_FALSE(r.ok);
}

TEST(CropAndResizeShape, OutputDataType) {
  PluginPtr p = plugin();
  for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kBF16}) {
    const DataType in[] = {t, DataType::kFLOAT, DataType::kINT32};
    DataType out = DataType::kINT8;
    EXPECT_EQ(p->getOutputDataType(0, in, 3, &out), kPLUGIN_SUCCESS);
    EXPECT_EQ(out, t);
  }
  const DataType in[] = {DataType::kINT8, DataType::kFLOAT};
  DataType out;
  EXPECT_NE(p->getOutputDataType(0, in, 2, &out), kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("feature_maps"), std::string::npos);
  EXPECT_NE(p->getOutputDataType(1, in, 2, &out), kPLUGIN_SUCCESS);
}

TEST(CropAndResizeShape, FormatCombinations) {
  PluginPtr p = plugin();
  const Dims image = makeDims({1, 2, 4, 4});
  const Dims out3 = makeDims({2, 2, 3, 5});
  auto supports = [&](int pos, std::vector<PluginTensorDesc> io, int nbInputs) {
    return p->supportsFormatCombination(pos, io.data(), nbInputs, 1);
  };
  const auto F = DataType::kFLOAT, H = DataType::kHALF, B = DataType::kBF16, I = DataType::kINT32;
  const auto L = TensorFormat::kLINEAR, CL = TensorFormat::kCHANNELS_LAST;
  // Feature map.
  for (DataType t : {F, H, B})
    for (TensorFormat f : {L, CL}) EXPECT_TRUE(supports(0, {desc(image, t, f)}, 3));
  EXPECT_FALSE(supports(0, {desc(image, DataType::kINT8)}, 3));
  EXPECT_FALSE(supports(0, {desc(makeDims({1, 2, 4}), F, CL)}, 3));  // channels-last is rank 4
  PluginTensorDesc onGpu = desc(image, F);
  onGpu.device = DeviceKind::kCUDA;
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  EXPECT_TRUE(supports(0, {onGpu}, 3));  // the library carries the CUDA kernel
#else
  EXPECT_FALSE(supports(0, {onGpu}, 3));  // built without CUDA
#endif
  // Every tensor on the feature map's device.
  PluginTensorDesc boxesOnGpu = desc(makeDims({2, 4}), F);
  boxesOnGpu.device = DeviceKind::kCUDA;
  EXPECT_FALSE(supports(1, {desc(image, F), boxesOnGpu}, 3));
  PluginTensorDesc boxesOnCpu = desc(makeDims({2, 4}), F);
  EXPECT_FALSE(supports(1, {onGpu, boxesOnCpu}, 3));
  // Boxes: fp32, or the feature map's type; linear.
  EXPECT_TRUE(supports(1, {desc(image, H), desc(makeDims({2, 4}), F)}, 3));
  EXPECT_TRUE(supports(1, {desc(image, H), desc(makeDims({2, 4}), H)}, 3));
  EXPECT_FALSE(supports(1, {desc(image, H), desc(makeDims({2, 4}), B)}, 3));
  EXPECT_FALSE(supports(1, {desc(image, F), desc(makeDims({2, 4}), I)}, 3));
  // Box indices: int32 linear.
  EXPECT_TRUE(supports(2, {desc(image, F), desc(makeDims({2, 4}), F), desc(makeDims({2}), I)}, 3));
  EXPECT_FALSE(supports(
      2, {desc(image, F), desc(makeDims({2, 4}), F), desc(makeDims({2}), DataType::kINT64)}, 3));
  // Output: the feature map's type; channels-last only in the three-input form.
  const PluginTensorDesc b3 = desc(makeDims({2, 4}), F), i3 = desc(makeDims({2}), I);
  EXPECT_TRUE(supports(3, {desc(image, H, CL), b3, i3, desc(out3, H)}, 3));
  EXPECT_TRUE(supports(3, {desc(image, H, CL), b3, i3, desc(out3, H, CL)}, 3));
  EXPECT_FALSE(supports(3, {desc(image, H), b3, i3, desc(out3, F)}, 3));
  const PluginTensorDesc b2 = desc(makeDims({1, 2, 4}), F);
  EXPECT_TRUE(supports(2, {desc(image, B), b2, desc(makeDims({1, 2, 2, 3, 5}), B)}, 2));
  EXPECT_FALSE(supports(2, {desc(image, B), b2, desc(makeDims({1, 2, 2, 3, 5}), B, CL)}, 2));
  // Nonsense positions and counts.
  EXPECT_FALSE(supports(4, {desc(image, F), b3, i3, desc(out3, F)}, 3));
  EXPECT_FALSE(supports(0, {desc(image, F)}, 1));
}

TEST(CropAndResizeShape, ConfigureChecksEverything) {
  PluginPtr p = plugin(3, 5);
  const PluginTensorDesc in[] = {desc(makeDims({2, 7, 10, 12}), DataType::kFLOAT),
                                 desc(makeDims({9, 4}), DataType::kFLOAT),
                                 desc(makeDims({9}), DataType::kINT32)};
  PluginTensorDesc out = desc(makeDims({9, 7, 3, 4}), DataType::kFLOAT);
  EXPECT_NE(p->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                               kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("[9,7,3,5]"), std::string::npos) << lastError(p.get());
  out = desc(makeDims({9, 7, 3, 5}), DataType::kHALF);
  EXPECT_NE(p->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                               kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("output"), std::string::npos) << lastError(p.get());
  const DynamicPluginTensorDesc twoOutputs[] = {staticPluginTensorDesc(out),
                                                staticPluginTensorDesc(out)};
  EXPECT_NE(p->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3, twoOutputs, 2),
            kPLUGIN_SUCCESS);
  out = desc(makeDims({9, 7, 3, 5}), DataType::kFLOAT);
  EXPECT_EQ(p->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                               kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS)
      << lastError(p.get());
  size_t bytes = 1;
  EXPECT_EQ(p->getWorkspaceSize(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                                kiln::staticPluginTensorDescs(&out, 1).data(), 1, &bytes),
            kPLUGIN_SUCCESS);
  EXPECT_EQ(bytes, 0u);
}

TEST(CropAndResizeShape, EnqueueChecksTensors) {
  PluginPtr p = plugin(1, 1);
  PluginTensorDesc in[] = {desc(makeDims({1, 1, 2, 2}), DataType::kFLOAT),
                           desc(makeDims({1, 4}), DataType::kFLOAT),
                           desc(makeDims({1}), DataType::kINT32)};
  PluginTensorDesc out = desc(makeDims({1, 1, 1, 1}), DataType::kFLOAT);
  const float image[] = {1, 2, 3, 4};
  const float boxes[] = {0, 0, 1, 1};
  const int32_t indices[] = {0};
  float result[1] = {0};
  const void* ins[] = {image, boxes, indices};
  void* outs[] = {result};
  // Never configured: it cannot know its form.
  EXPECT_NE(p->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("configured"), std::string::npos) << lastError(p.get());
  ASSERT_EQ(p->configurePlugin(kiln::staticPluginTensorDescs(in, 3).data(), 3,
                               kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS)
      << lastError(p.get());
  ASSERT_EQ(p->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  EXPECT_EQ(result[0], 2.5f);
  // A tensor that differs from the configuration.
  in[1].type = DataType::kHALF;
  EXPECT_NE(p->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("boxes"), std::string::npos) << lastError(p.get());
  in[1].type = DataType::kFLOAT;
  // Wrong output dims, null buffers.
  out.dims = makeDims({1, 1, 1, 2});
  EXPECT_NE(p->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  out.dims = makeDims({1, 1, 1, 1});
  const void* noBoxes[] = {image, nullptr, indices};
  EXPECT_NE(p->enqueue(in, &out, noBoxes, outs, nullptr, nullptr), kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("boxes"), std::string::npos) << lastError(p.get());
  // Lifecycle calls that the CPU path makes trivially successful.
  EXPECT_EQ(p->initialize(), kPLUGIN_SUCCESS);
  EXPECT_EQ(p->terminate(), kPLUGIN_SUCCESS);
}

}  // namespace
}  // namespace kiln::testing
