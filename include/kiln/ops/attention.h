// Parameters of the built-in Attention layer: scaled dot-product attention as one layer
// (src/ops/attention/). The builder's attention_fusion pass makes it from the MatMul -> scale ->
// mask add -> Softmax -> MatMul chain that exporters write; the network API can add it directly.
#pragma once

#include <cstdint>

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
//
// Head views (`viewed`): Q, K and V are read where they lie inside larger tensors, and O is
// written in another order, so that the transposes, slices and gathers exporters write around
// multi-head attention (Q, K, V picked from one packed projection [S, B, 3 * H * D], heads moved
// in front of the sequence, and back for O) are never copies. Each of Q, K, V is then a view of
// its input X (any rank up to 8, contiguous) in four roles, batch B, heads H, sequence S and head
// size D, plus an optional slot role (which third of a packed projection): role r of input i
// lives on axis viewAxis[5 i + r] of X (-1: absent, size 1), at viewInner times that axis's
// stride, with viewSize elements (0: the rest of the axis, its extent / inner). The roles on one
// axis must tile it exactly (the innermost at inner 1, each next at the inner of the one inside
// times its size, the outermost reaching the extent); an axis no role uses must be 1; D is on
// X's last axis at inner 1; the slot role reads index viewSlot[i]. B and H of Q, K and V must
// agree (no broadcasting), K is never transposed. The attention is then over [B, H, Sq, Sk], a
// Mask broadcasts to that (or is [B * H, Sq, Sk] with the two merged, as exports that attend over
// [B * H, S, D] write it), and O holds the roles B, H, S and Dv in memory in outputOrder
// (outermost first, D last); its dims are those roles, a role with outputMerged set joined to
// the dim before it ([S, B, H, D] with H and D merged is [S, B, H * D]).
struct AttentionParams {
  static constexpr int32_t kRoles = 5;  // B, H, S, D, slot
  enum Role : int32_t { kBatch = 0, kHeads = 1, kSequence = 2, kHeadSize = 3, kSlot = 4 };

  float scale = 1.f;  // finite
  bool keyTransposed = false;
  bool zeroNanRows = false;
  bool viewed = false;
  int32_t viewAxis[3 * kRoles] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  int64_t viewInner[3 * kRoles] = {};
  int64_t viewSize[3 * kRoles] = {};
  int64_t viewSlot[3] = {};
  int32_t outputOrder[4] = {kBatch, kHeads, kSequence, kHeadSize};
  bool outputMerged[4] = {};

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("scale", p.scale);
    v("keyTransposed", p.keyTransposed);
    v("zeroNanRows", p.zeroNanRows);
    v("viewed", p.viewed);
    v("viewAxis", p.viewAxis);
    v("viewInner", p.viewInner);
    v("viewSize", p.viewSize);
    v("viewSlot", p.viewSlot);
    v("outputOrder", p.outputOrder);
    v("outputMerged", p.outputMerged);
  }
};

}  // namespace kiln
