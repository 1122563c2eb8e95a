// Parameters of the built-in Gemm layer (ONNX Gemm, and fully connected; src/ops/gemm/).
#pragma once

namespace kiln {

// ONNX Gemm: A [M,K] (or [K,M] transposed), B [K,N] (or [N,K]), optional C broadcastable to [M,N].
// Y = alpha * op(A) op(B) + beta * C.
struct GemmParams {
  float alpha = 1.f;
  float beta = 1.f;
  bool transposeA = false;
  bool transposeB = false;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("alpha", p.alpha);
    v("beta", p.beta);
    v("transposeA", p.transposeA);
    v("transposeB", p.transposeB);
  }
};

}  // namespace kiln
