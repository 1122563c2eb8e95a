// Parameters of the built-in Deconvolution layer (ONNX ConvTranspose; src/ops/deconvolution/).
#pragma once

#include <cstdint>

namespace kiln {

// Transposed 2-D convolution over [N, C, H, W] with weights [C, outChannels/groups, kernelH,
// kernelW] and optional bias [outChannels]. Output
// OH = strideH*(H-1) + outputPaddingH + dilationH*(kernelH-1) + 1 - padTop - padBottom.
struct DeconvolutionParams {
  int32_t outChannels = 0;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int32_t dilationH = 1, dilationW = 1;
  int32_t groups = 1;
  int32_t outputPaddingH = 0, outputPaddingW = 0;

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
    v("outputPaddingH", p.outputPaddingH);
    v("outputPaddingW", p.outputPaddingW);
  }
};

}  // namespace kiln
