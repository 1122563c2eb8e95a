// The CPU kernel of CropAndResize: DESIGN.md §5, in float32, in the order it gives.
#pragma once

#include <cstdint>

#include "crop_and_resize_fields.h"
#include "kiln/types.h"

namespace kiln::plugins {

struct CropAndResizeCpuArgs {
  // Feature map [N,C,H,W] (logical dims), linear or channels-last; fp32, fp16 or bf16.
  const void* feature = nullptr;
  DataType featureType = DataType::kFLOAT;
  TensorFormat featureFormat = TensorFormat::kLINEAR;
  int64_t n = 0, c = 0, h = 0, w = 0;
  // numBoxes boxes of 4 values (y1, x1, y2, x2); fp32 or the feature map's type.
  const void* boxes = nullptr;
  DataType boxesType = DataType::kFLOAT;
  int64_t numBoxes = 0;
  // Three-input form: the image of each box. nullptr in the two-input form, where box k belongs
  // to image k / boxesPerImage.
  const int32_t* boxIndices = nullptr;
  int64_t boxesPerImage = 1;
  // Output [numBoxes, C, cropHeight, cropWidth] in the feature map's type; linear, or
  // channels-last (then laid out [numBoxes, cropHeight, cropWidth, C]).
  void* output = nullptr;
  TensorFormat outputFormat = TensorFormat::kLINEAR;
  int32_t cropHeight = 1, cropWidth = 1;
  ResizeMethod method = ResizeMethod::kBILINEAR;
  float extrapolationValue = 0.0f;
};

// Boxes whose index was outside [0, N): their output is the extrapolation value.
struct CropAndResizeCpuReport {
  int64_t badBoxes = 0;
  int64_t firstBadBox = -1;
  int32_t firstBadIndex = 0;
};

// Unsupported types must be rejected before the call. Returns false only if scratch memory
// (two small per-box tables) cannot be allocated.
bool cropAndResizeCpu(const CropAndResizeCpuArgs& args, CropAndResizeCpuReport& report) noexcept;

}  // namespace kiln::plugins
