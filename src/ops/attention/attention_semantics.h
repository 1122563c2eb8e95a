// The rules of Attention (kiln/ops/attention.h) that the CPU tactics (attention_cpu.cpp) and the
// CUDA kernels (attention_cuda.cu) share, so that the backends cannot drift apart: where each
// element of Q, K, V and Mask lives for a batch index (numpy broadcasting of the batch dims,
// matrix_multiply_semantics.h), one score, and the online-softmax update that the blocked and
// tiled kernels apply per key block.
//
// The online softmax (Milakov and Gimelshein): over key blocks, a row keeps its running maximum
// m, the sum l of exp(s - m) and the unnormalised output o. A new block with maximum b gives
// m' = max(m, b); o and l are scaled by exp(m - m') and the block's terms exp(s - m') added. Two
// guards keep it equal to the one-pass softmax of the Softmax layer:
//   - while every score so far is -inf (a masked-out block first), m' is -inf and exp(s - m')
//     would be NaN: the reference point is then 0 instead, so those terms are exactly 0;
//   - a row whose scores are all -inf ends with l = 0 and o = 0: 0 / 0 gives NaN, which is what
//     the unfused Softmax gives for such a row. A NaN score never wins the maximum (fmax) but its
//     term makes l, and so the row, NaN, again as the Softmax layer does.
// With zeroNanRows such a row (l NaN or 0) weighs V by zeros instead (kiln/ops/attention.h):
// every kernel tests its final sum with nanRow and then writes the sum over keys of 0 * V.
//
// Every index is through the geometry's strides (rows of Q, K, V and O at qRow, kRow, vRow and
// yRow, batch indices at the per-axis strides), so a viewed Attention (head views,
// attention_views.h) runs on the same kernels as a plain one.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/attention.h"
#include "kiln/types.h"
#include "ops/attention/attention_views.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"

namespace kiln::ops::attention {

struct Geometry {
  int32_t batchRank = 0;
  int64_t batch[Dims::kMaxDims] = {};  // the output's batch dims
  int64_t count = 1;                   // batch indices (their product)
  int64_t sq = 0, sk = 0, d = 0, dv = 0;
  float scale = 1.f;
  bool keyTransposed = false;
  bool hasMask = false;
  bool zeroNanRows = false;
  // Per batch axis, each input's and the output's element stride along it (0 where an input
  // broadcasts).
  int64_t qStride[Dims::kMaxDims] = {}, kStride[Dims::kMaxDims] = {}, vStride[Dims::kMaxDims] = {},
          maskStride[Dims::kMaxDims] = {}, yStride[Dims::kMaxDims] = {};
  int64_t maskRowStride = 0, maskColStride = 0;  // along Sq and Sk (0 where the mask broadcasts)
  // Between consecutive rows (queries, keys, values, outputs), in elements: d, d, dv and dv for
  // plain matrices; whatever the head views say otherwise. Along D every row is contiguous.
  int64_t qRow = 0, kRow = 0, vRow = 0, yRow = 0;
  // Where element 0 of Q, K and V is in their inputs (a head view's slot).
  int64_t qBase = 0, kBase = 0, vBase = 0;
};

// Where batch index n finds its matrices, in elements.
struct Offsets {
  int64_t q = 0, k = 0, v = 0, mask = 0, y = 0;
};

// I is the type the batch index is divided in: a kernel that knows the count fits 32 bits
// passes int, whose division is several times cheaper on a GPU than int64_t's.
template <class I = int64_t>
KILN_HOST_DEVICE inline Offsets offsetsOf(const Geometry& g, I n) {
  Offsets o;
  o.q = g.qBase;
  o.k = g.kBase;
  o.v = g.vBase;
  for (int32_t i = g.batchRank - 1; i >= 0; --i) {
    const I extent = static_cast<I>(g.batch[i]);
    const I c = n % extent;
    n /= extent;
    o.q += c * g.qStride[i];
    o.k += c * g.kStride[i];
    o.v += c * g.vStride[i];
    o.mask += c * g.maskStride[i];
    o.y += c * g.yStride[i];
  }
  return o;
}

// Element (j, e) of K for a batch (k points at its matrix): K[j][e], or K[e][j] when transposed.
KILN_HOST_DEVICE inline int64_t keyIndex(const Geometry& g, int64_t j, int64_t e) {
  return g.keyTransposed ? e * g.sk + j : j * g.kRow + e;
}

// Element (i, j) of the mask for a batch (mask points at its offset).
KILN_HOST_DEVICE inline int64_t maskIndex(const Geometry& g, int64_t i, int64_t j) {
  return i * g.maskRowStride + j * g.maskColStride;
}

// Score (i, j) from the dot product of row i of Q and key j: scale * dot + mask.
template <class V>
KILN_HOST_DEVICE inline V score(V dot, float scale, V mask) {
  return static_cast<V>(scale) * dot + mask;
}

// The reference point of a block's exponentials: the new running maximum, or 0 while it is
// -inf (see the header comment).
template <class V>
KILN_HOST_DEVICE inline V referencePoint(V runningMax) {
  return runningMax == -static_cast<V>(INFINITY) ? V(0) : runningMax;
}

// Whether a row's softmax is NaN, from its sum of exponentials: NaN (a NaN or +inf score), or 0
// (every score -inf, the exponentials taken from reference point 0).
template <class V>
KILN_HOST_DEVICE inline bool nanRow(V sum) {
  return !(sum > V(0));
}

// The mask's strides over [batch..., Sq, Sk]: it aligns right, a missing or size-1 dim
// broadcasts.
inline void setMaskStrides(Geometry& g, const Dims& m) {
  using ops::matrix_multiply::broadcastStrides;
  g.hasMask = true;
  const int64_t cols = m.nbDims >= 1 ? m.d[m.nbDims - 1] : 1;
  const int64_t rows = m.nbDims >= 2 ? m.d[m.nbDims - 2] : 1;
  g.maskColStride = cols == 1 ? 0 : 1;
  g.maskRowStride = rows == 1 ? 0 : cols;
  const int32_t maskBatch = m.nbDims > 2 ? m.nbDims - 2 : 0;
  broadcastStrides(g.batchRank, m.d, maskBatch, rows * cols, g.maskStride);
}

// The geometry of a viewed Attention (head views, attention_views.h) whose shapes the shape rule
// accepted: batch [B, H], every stride from the views.
inline Geometry viewedGeometryOf(const AttentionParams& p, const Dims& q, const Dims& k,
                                 const Dims& v, const Dims* mask) {
  Geometry g;
  g.scale = p.scale;
  g.zeroNanRows = p.zeroNanRows;
  InputView views[3];
  resolveInputView(p, 0, q, views[0], nullptr);
  resolveInputView(p, 1, k, views[1], nullptr);
  resolveInputView(p, 2, v, views[2], nullptr);
  using R = AttentionParams::Role;
  g.batchRank = 2;
  g.batch[0] = views[0].role[R::kBatch].size;
  g.batch[1] = views[0].role[R::kHeads].size;
  g.count = g.batch[0] * g.batch[1];
  g.sq = views[0].role[R::kSequence].size;
  g.d = views[0].role[R::kHeadSize].size;
  g.sk = views[1].role[R::kSequence].size;
  g.dv = views[2].role[R::kHeadSize].size;
  int64_t* strides[3] = {g.qStride, g.kStride, g.vStride};
  int64_t* rows[3] = {&g.qRow, &g.kRow, &g.vRow};
  int64_t* bases[3] = {&g.qBase, &g.kBase, &g.vBase};
  for (int i = 0; i < 3; ++i) {
    strides[i][0] = views[i].role[R::kBatch].stride;
    strides[i][1] = views[i].role[R::kHeads].stride;
    *rows[i] = views[i].role[R::kSequence].stride;
    *bases[i] = views[i].offset;
  }
  const int64_t sizes[4] = {g.batch[0], g.batch[1], g.sq, g.dv};
  Dims y;
  int64_t ys[4] = {};
  outputLayout(p, sizes, y, ys, nullptr);
  g.yStride[0] = ys[R::kBatch];
  g.yStride[1] = ys[R::kHeads];
  g.yRow = ys[R::kSequence];
  if (mask) {
    setMaskStrides(g, *mask);
    if (maskMergesBatch(*mask, g.batch[0], g.batch[1])) {  // [B * H, rows, cols]
      const int64_t matrix = (mask->d[mask->nbDims - 2]) * (mask->d[mask->nbDims - 1]);
      g.maskStride[1] = matrix;
      g.maskStride[0] = matrix * g.batch[1];
    }
  }
  return g;
}

// The geometry of a configuration whose shapes the shape rule accepted (host code): Q, K, V,
// optional Mask and the output's dims.
inline Geometry geometryOf(const AttentionParams& p, const Dims& q, const Dims& k, const Dims& v,
                           const Dims* mask, const Dims& y) {
  if (p.viewed) return viewedGeometryOf(p, q, k, v, mask);
  Geometry g;
  g.scale = p.scale;
  g.keyTransposed = p.keyTransposed;
  g.zeroNanRows = p.zeroNanRows;
  const bool keyTransposed = p.keyTransposed;
  g.batchRank = y.nbDims - 2;
  for (int32_t i = 0; i < g.batchRank; ++i) {
    g.batch[i] = y.d[i];
    g.count *= y.d[i];
  }
  g.sq = q.d[q.nbDims - 2];
  g.d = q.d[q.nbDims - 1];
  g.sk = keyTransposed ? k.d[k.nbDims - 1] : k.d[k.nbDims - 2];
  g.dv = v.d[v.nbDims - 1];
  g.qRow = g.d;
  g.kRow = g.d;
  g.vRow = g.dv;
  g.yRow = g.dv;
  using ops::matrix_multiply::broadcastStrides;
  broadcastStrides(g.batchRank, q.d, q.nbDims - 2, g.sq * g.d, g.qStride);
  broadcastStrides(g.batchRank, k.d, k.nbDims - 2, g.sk * g.d, g.kStride);
  broadcastStrides(g.batchRank, v.d, v.nbDims - 2, g.sk * g.dv, g.vStride);
  for (int32_t i = g.batchRank - 1; i >= 0; --i)
    g.yStride[i] = i == g.batchRank - 1 ? g.sq * g.dv : g.yStride[i + 1] * g.batch[i + 1];
  if (mask) setMaskStrides(g, *mask);
  return g;
}

}  // namespace kiln::ops::attention
