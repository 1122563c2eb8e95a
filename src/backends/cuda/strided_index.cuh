// Strided indexing for kiln's own CUDA kernels that take any mix of linear and channels-last
// tensors: each tensor is seen as logical dims plus per-dim memory strides (row-major for linear;
// N, H, W, C memory order for rank-4 channels-last). A reference kernel indexes through those
// strides, so it takes every layout; a faster tactic asks for the memory layout it was written
// for (isRowMajor) and says so when it declines.
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln::cuda {

// Memory strides (in elements) of each logical dim.
inline void memoryStrides(const PluginTensorDesc& d, int64_t* s) {
  const Dims& x = d.dims;
  if (d.format == TensorFormat::kCHANNELS_LAST && x.nbDims == 4) {
    const int64_t C = x.d[1], H = x.d[2], W = x.d[3];
    s[0] = H * W * C;
    s[1] = 1;
    s[2] = W * C;
    s[3] = C;
    return;
  }
  int64_t v = 1;
  for (int32_t i = x.nbDims - 1; i >= 0; --i) {
    s[i] = v;
    v *= x.d[i];
  }
}

// True when the tensor's memory order is row-major over its logical dims (linear, or a
// channels-last tensor whose layout coincides, e.g. [N,C,1,1] or [N,1,H,W]).
inline bool isRowMajor(const PluginTensorDesc& d) {
  if (d.format == TensorFormat::kLINEAR) return true;
  int64_t mem[Dims::kMaxDims] = {}, rm[Dims::kMaxDims] = {};
  memoryStrides(d, mem);
  int64_t v = 1;
  for (int32_t i = d.dims.nbDims - 1; i >= 0; --i) {
    rm[i] = v;
    v *= d.dims.d[i];
  }
  for (int32_t i = 0; i < d.dims.nbDims; ++i)
    if (d.dims.d[i] > 1 && mem[i] != rm[i]) return false;
  return true;
}

// Splits a row-major `index` over dims[0..rank) (last fastest) and accumulates two offsets, one
// per stride set (e.g. input and output).
struct StridedWalk {
  int32_t rank = 0;
  int64_t dims[Dims::kMaxDims] = {};
  int64_t s1[Dims::kMaxDims] = {};
  int64_t s2[Dims::kMaxDims] = {};
  __host__ __device__ void offsets(int64_t index, int64_t& o1, int64_t& o2) const {
    o1 = 0;
    o2 = 0;
#pragma unroll
    for (int32_t k = Dims::kMaxDims - 1; k >= 0; --k) {
      if (k < rank) {
        const int64_t c = index % dims[k];
        index /= dims[k];
        o1 += c * s1[k];
        o2 += c * s2[k];
      }
    }
  }
};

// [N, C, spatial...] seen as (n, c, s) with S the product of the spatial dims; channels-last
// (rank 4) puts c innermost.
struct ChannelView {
  int64_t N = 0, C = 0, S = 1;
  bool inLast = false, outLast = false;  // input 0 and output 0 are channels-last
  __host__ __device__ int64_t at(int64_t n, int64_t c, int64_t s, bool last) const {
    return last ? (n * S + s) * C + c : (n * C + c) * S + s;
  }
};

// The view of a layer whose input 0 is [N, C, spatial...], with its and output 0's formats.
inline ChannelView channelView(const PluginTensorDesc& in, const PluginTensorDesc& out) {
  const Dims& d = in.dims;
  ChannelView v;
  v.N = d.d[0];
  v.C = d.d[1];
  for (int32_t i = 2; i < d.nbDims; ++i) v.S *= d.d[i];
  v.inLast = in.format == TensorFormat::kCHANNELS_LAST;
  v.outLast = out.format == TensorFormat::kCHANNELS_LAST;
  return v;
}

}  // namespace kiln::cuda
