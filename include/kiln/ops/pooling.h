// Parameters of the built-in Pooling layer (src/ops/pooling/).
#pragma once

#include <cstdint>

namespace kiln {

enum class PoolingType : int32_t {
  kMAX = 0,
  kAVERAGE = 1,
  kGLOBAL_MAX = 2,  // kernel = whole spatial extent, output [N, C, 1, 1]
  kGLOBAL_AVERAGE = 3,
};
constexpr int32_t enumCount(PoolingType) { return 4; }

struct PoolingParams {
  PoolingType type = PoolingType::kMAX;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  // Average pooling: divide by the full window (true) or only the elements inside the image.
  bool countIncludePad = false;
  // Output size rounds up instead of down (ONNX ceil_mode).
  bool ceilMode = false;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("type", p.type);
    v("kernelH", p.kernelH);
    v("kernelW", p.kernelW);
    v("strideH", p.strideH);
    v("strideW", p.strideW);
    v("padTop", p.padTop);
    v("padLeft", p.padLeft);
    v("padBottom", p.padBottom);
    v("padRight", p.padRight);
    v("countIncludePad", p.countIncludePad);
    v("ceilMode", p.ceilMode);
  }
};

}  // namespace kiln
