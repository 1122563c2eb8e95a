// Parameters of the built-in Convolution layer (src/ops/convolution/).
#pragma once

#include <cstdint>

#include "kiln/ops/activation.h"

namespace kiln {

// 2-D convolution over NCHW input [N, C, H, W] with weights [K, C/groups, kH, kW] and an optional
// bias [K]. Output [N, K, OH, OW] with OH = (H + padTop + padBottom - dilH*(kH-1) - 1)/strideH + 1.
//
// Its epilogue, as the builder's conv_fusion pass makes it from the Conv -> residual Add ->
// activation chains of CNNs (a ResNet block's last convolution, a MobileNet's ReLU6), so that it
// runs in the convolution's own kernel instead of as separate passes over the output:
//   Y = act(conv(X, W) + bias + residual)
// Inputs, in this order: X, W, bias [K] (optional), residual of exactly the output's shape and type
// when hasResidual (the last input). act is the Activation layer's function `activation` with
// activationAlpha/Beta as its alpha and beta (activation_semantics.h), or the identity when
// !hasActivation; it must have a float form (not kNOT). These are LinearParams' epilogue fields,
// named alike.
struct ConvolutionParams {
  int32_t outChannels = 0;
  int32_t kernelH = 1, kernelW = 1;
  int32_t strideH = 1, strideW = 1;
  int32_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int32_t dilationH = 1, dilationW = 1;
  int32_t groups = 1;
  bool hasResidual = false;
  bool hasActivation = false;
  ActivationType activation = ActivationType::kRELU;
  float activationAlpha = 0.f;
  float activationBeta = 0.f;

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
    v("hasResidual", p.hasResidual);
    v("hasActivation", p.hasActivation);
    v("activation", p.activation);
    v("activationAlpha", p.activationAlpha);
    v("activationBeta", p.activationBeta);
  }
};

}  // namespace kiln
