// What configurePlugin() decides for a CropAndResize plugin, the type/format rules that
// supportsFormatCombination() answers with, and the shape rules.
//
// Type and format rules (the tensor at each position, inputs first):
//   0 feature_maps / image   fp32, fp16 or bf16; linear, or channels-last (rank 4)
//   1 rois / boxes           fp32, or the feature map's type (a model with fp16 boxes needs no
//                            cast); linear
//   2 box_indices (3 inputs) int32, linear
//   output                   the feature map's type; linear. The three-input form, whose output
//                            is rank 4 [K,C,crop_h,crop_w], may also be channels-last, so that an
//                            NHWC network needs no reformat after the crop.
// Every tensor is on one device: the CPU, or CUDA when the library was built with CUDA
// (KILN_PLUGINS_CUDA); a library built without CUDA refuses kCUDA descriptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/types.h"

namespace kiln::plugins {

struct CropAndResizeConfig {
  int32_t nbInputs = 0;  // 2 or 3 once configured; 0 before
  DataType featureType = DataType::kFLOAT;
  TensorFormat featureFormat = TensorFormat::kLINEAR;
  DataType boxesType = DataType::kFLOAT;
  TensorFormat outputFormat = TensorFormat::kLINEAR;
  DeviceKind device = DeviceKind::kCPU;

  bool configured() const { return nbInputs != 0; }
};

// May the tensor at `pos` have the type and format of inOut[pos], given inOut[0..pos-1]? When
// not and `why` is given, it says why.
bool cropAndResizeSupports(int32_t pos, const PluginTensorDesc* inOut, int32_t nbInputs,
                           int32_t nbOutputs, std::string* why);

// Checks every position of a full configuration; "" when it is valid, else what is wrong.
std::string checkCropAndResizeConfig(const PluginTensorDesc* inOut, int32_t nbInputs,
                                     int32_t nbOutputs);

// Descriptions (device, type, format and rank) that a stored configuration stands for, for
// re-checking a deserialized one. `inOut` must hold nbInputs + 1 entries.
void describeCropAndResizeConfig(const CropAndResizeConfig& config, PluginTensorDesc* inOut);

// A shape whose dims may be unknown (a non-constant expression).
struct ShapeView {
  int32_t nbDims = 0;
  std::optional<int64_t> d[Dims::kMaxDims];
};

// Checks the input shapes of either form; "" when they are valid, else what is wrong.
std::string checkCropAndResizeShapes(const ShapeView* inputs, int32_t nbInputs);

// Output dims for known input dims (after checkCropAndResizeShapes passed).
Dims cropAndResizeOutputDims(const Dims* inputs, int32_t nbInputs, int32_t cropHeight,
                             int32_t cropWidth);

ShapeView shapeOf(const Dims& dims);
std::string shapeString(const ShapeView& shape);

}  // namespace kiln::plugins
