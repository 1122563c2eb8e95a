// Parameters of the built-in Linear layer: a matrix product with its bias, residual and activation
// in one step (src/ops/linear/). The builder's linear_fusion pass makes it from the MatMul or Gemm
// -> bias Add -> residual Add -> activation chains that exporters write, so that the epilogue runs
// in the product's kernel (cuBLASLt on CUDA) instead of as separate passes over the output; the
// network API can add it directly.
#pragma once

#include "kiln/ops/activation.h"

namespace kiln {

// Inputs, in this order: X [..., M, K]; W [K, N] ([N, K] when transposeW: Gemm's transB, the weight
// of torch's nn.Linear); bias [N] when hasBias; residual, of exactly the output's shape, when
// hasResidual. Output Y [..., M, N], X's leading dims kept (X is contiguous, so they are rows):
//   Y = act(X W + bias + residual)
// act is the Activation layer's function `activation` with activationAlpha/Beta as its alpha and
// beta (activation_semantics.h), or the identity when !hasActivation; it must have a float form
// (not kNOT). All inputs have one floating-point type. Kernels accumulate in FP32 (the CPU
// reference in double) and round once, after the activation.
struct LinearParams {
  bool transposeW = false;
  bool hasBias = false;
  bool hasResidual = false;
  bool hasActivation = false;
  ActivationType activation = ActivationType::kRELU;
  float activationAlpha = 0.f;
  float activationBeta = 0.f;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("transposeW", p.transposeW);
    v("hasBias", p.hasBias);
    v("hasResidual", p.hasResidual);
    v("hasActivation", p.hasActivation);
    v("activation", p.activation);
    v("activationAlpha", p.activationAlpha);
    v("activationBeta", p.activationBeta);
  }
};

}  // namespace kiln
