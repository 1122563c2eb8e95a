// Parameters of the built-in RoiAlign layer (src/ops/roi_align/).
#pragma once

#include <cstdint>

namespace kiln {

enum class RoiAlignMode : int32_t { kAVERAGE = 0, kMAX = 1 };
constexpr int32_t enumCount(RoiAlignMode) { return 2; }

// ONNX RoiAlign: inputs X [N, C, H, W], rois [R, 4] as (x1, y1, x2, y2), batch_indices [R]
// (kINT32 or kINT64). Output [R, C, outputHeight, outputWidth].
struct RoiAlignParams {
  RoiAlignMode mode = RoiAlignMode::kAVERAGE;
  int32_t outputHeight = 1, outputWidth = 1;
  int32_t samplingRatio = 0;  // 0: adaptive, ceil(roi size / output size)
  float spatialScale = 1.f;
  // coordinate_transformation_mode half_pixel (opset 16), else output_half_pixel.
  bool halfPixel = true;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("mode", p.mode);
    v("outputHeight", p.outputHeight);
    v("outputWidth", p.outputWidth);
    v("samplingRatio", p.samplingRatio);
    v("spatialScale", p.spatialScale);
    v("halfPixel", p.halfPixel);
  }
};

}  // namespace kiln
