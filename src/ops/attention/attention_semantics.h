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
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/attention.h"
#include "kiln/types.h"
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
  // Per batch axis, each input's element stride along it (0 where it broadcasts).
  int64_t qStride[Dims::kMaxDims] = {}, kStride[Dims::kMaxDims] = {}, vStride[Dims::kMaxDims] = {},
          maskStride[Dims::kMaxDims] = {};
  int64_t maskRowStride = 0, maskColStride = 0;  // along Sq and Sk (0 where the mask broadcasts)
};

// Where batch index n finds its matrices, in elements.
struct Offsets {
  int64_t q = 0, k = 0, v = 0, mask = 0;
};

KILN_HOST_DEVICE inline Offsets offsetsOf(const Geometry& g, int64_t n) {
  Offsets o;
  for (int32_t i = g.batchRank - 1; i >= 0; --i) {
    const int64_t c = n % g.batch[i];
    n /= g.batch[i];
    o.q += c * g.qStride[i];
    o.k += c * g.kStride[i];
    o.v += c * g.vStride[i];
    o.mask += c * g.maskStride[i];
  }
  return o;
}

// Element (j, e) of K for a batch (k points at its matrix): K[j][e], or K[e][j] when transposed.
KILN_HOST_DEVICE inline int64_t keyIndex(const Geometry& g, int64_t j, int64_t e) {
  return g.keyTransposed ? e * g.sk + j : j * g.d + e;
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

// The geometry of a configuration whose shapes the shape rule accepted (host code): Q, K, V,
// optional Mask and the output's dims.
inline Geometry geometryOf(const AttentionParams& p, const Dims& q, const Dims& k, const Dims& v,
                           const Dims* mask, const Dims& y) {
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
  using ops::matrix_multiply::broadcastStrides;
  broadcastStrides(g.batchRank, q.d, q.nbDims - 2, g.sq * g.d, g.qStride);
  broadcastStrides(g.batchRank, k.d, k.nbDims - 2, g.sk * g.d, g.kStride);
  broadcastStrides(g.batchRank, v.d, v.nbDims - 2, g.sk * g.dv, g.vStride);
  if (mask) {
    g.hasMask = true;
    // The mask aligns right with [batch..., Sq, Sk]; a missing or size-1 dim broadcasts.
    const Dims& m = *mask;
    const int64_t cols = m.nbDims >= 1 ? m.d[m.nbDims - 1] : 1;
    const int64_t rows = m.nbDims >= 2 ? m.d[m.nbDims - 2] : 1;
    g.maskColStride = cols == 1 ? 0 : 1;
    g.maskRowStride = rows == 1 ? 0 : cols;
    const int32_t maskBatch = m.nbDims > 2 ? m.nbDims - 2 : 0;
    broadcastStrides(g.batchRank, m.d, maskBatch, rows * cols, g.maskStride);
  }
  return g;
}

}  // namespace kiln::ops::attention
