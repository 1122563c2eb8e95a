// Parameters of the built-in Attention layer: scaled dot-product attention as one layer
// (src/ops/attention/). The builder's attention_fusion pass makes it from the MatMul -> scale ->
// mask add -> Softmax -> MatMul chain that exporters write; the network API can add it directly.
#pragma once

namespace kiln {

// Inputs Q [..., Sq, D], K [..., Sk, D] (or [..., D, Sk] when keyTransposed: the right operand of
// the Q x K^T product as exporters write it), V [..., Sk, Dv] and an optional additive Mask that
// broadcasts to [..., Sq, Sk]; output O [..., Sq, Dv]:
//   S = scale * Q K^T + Mask        (per batch index, [Sq, Sk])
//   O = softmax(S along Sk) V
// The leading (batch) dims of Q, K, V and Mask broadcast in numpy's rules, as MatrixMultiply's do
// (a K or V shared by every head, say); O has the broadcast batch dims. All inputs are of one
// floating-point type; Mask values are added as they are (-inf masks a key out).
//
// The softmax follows the Softmax layer's rules (softmax_semantics.h): the row maximum is
// subtracted before exp, a row whose scores are all -inf gives NaN (as the unfused chain would),
// a NaN score makes its row NaN. Every kernel computes the scores, the softmax statistics and the
// weighted sum in FP32 whatever the storage type; in FP16 only the probabilities that weight V are
// rounded (to the storage type) on the tensor-core tactic.
//
// zeroNanRows: a row whose softmax is NaN (every score -inf, or a NaN or +inf among them) weighs V
// by zeros instead, so its output is the sum over keys of 0 * V (0 where V is finite): the
// Where(IsNaN(P), 0, P) guard that PyTorch's scaled_dot_product_attention export writes after its
// softmax, which the attention_fusion pass takes into the layer.
struct AttentionParams {
  float scale = 1.f;  // finite
  bool keyTransposed = false;
  bool zeroNanRows = false;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("scale", p.scale);
    v("keyTransposed", p.keyTransposed);
    v("zeroNanRows", p.zeroNanRows);
  }
};

}  // namespace kiln
