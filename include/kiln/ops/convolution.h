// Parameters of the built-in Convolution layer (src/ops/convolution/).
#pragma once

#include <cstdint>

namespace kiln {

// 2-D convolution over NCHW input [N, C, H, W] with weights [K, C/groups, kH, kW] and an optional
// bias [K]. Output [N, K, OH, OW] with OH = (H + padTop + padBottom - dilH*(kH-1) - 1)/strideH + 1.
struct ConvolutionParams {
  int32_t outChannels = 0;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int32_t dilationH = 1, dilationW = 1;
  int32_t groups = 1;

  // Every field once, in plan order: the plan codec, `kiln inspect`, equality and the timing
  // cache key all come from this list (kiln/params.h says how).
  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("outChannels", p.outChannels);
    v("kernelH", p.kernelH);
    v("kernelW", p.kernelW);
    v("strideH", p.strideH);
    v("strideW", p.strideW);
    v("padTop", p.padTop);
    v("padLeft", p.padLeft);
    v("padBottom", p.padBottom);
    v("padRight", p.padRight);
    v("dilationH", p.dilationH);
    v("dilationW", p.dilationW);
    v("groups", p.groups);
  }
};

}  // namespace kiln
