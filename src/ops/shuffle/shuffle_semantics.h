// Shuffle's index mapping, shared by its CPU and CUDA kernels (shuffle_cpu.cpp, shuffle_cuda.cu):
// first transpose, reshape (which moves no data in the linear format), second transpose. At most
// two permuted copies are made, one per transpose that really permutes; when both do, the first
// goes to the workspace and the second reads it back.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/shuffle.h"
#include "kiln/types.h"

namespace kiln::ops::shuffle {

KILN_HOST_DEVICE inline bool isIdentity(const int32_t* perm, int32_t rank) {
  for (int32_t i = 0; i < rank; ++i)
    if (perm[i] != i) return false;
  return true;
}

// One permuted copy of a row-major tensor: output dim i is input dim perm[i]. The output is
// row-major over outDims; inStrides[i] is the input's stride, in elements, along output dim i.
struct Permutation {
  int32_t rank = 0;
  int64_t outDims[Dims::kMaxDims] = {};
  int64_t inStrides[Dims::kMaxDims] = {};
};

KILN_HOST_DEVICE inline Permutation permutation(const Dims& in, const int32_t* perm) {
  int64_t own[Dims::kMaxDims] = {};
  int64_t s = 1;
  for (int32_t i = in.nbDims - 1; i >= 0; --i) {
    own[i] = s;
    s *= in.d[i];
  }
  Permutation p;
  p.rank = in.nbDims;
  for (int32_t i = 0; i < in.nbDims; ++i) {
    p.outDims[i] = in.d[perm[i]];
    p.inStrides[i] = own[perm[i]];
  }
  return p;
}

// The copies a shuffle makes: `first` and `second` say which transposes really permute (neither:
// the output is a plain copy of the input); p1 and p2 are their permutations.
struct Plan {
  int64_t elemSize = 0;  // bytes per element
  int64_t bytes = 0;     // of the tensor
  bool first = false;
  Permutation p1;
  bool second = false;
  Permutation p2;
  // Both copies: the first writes the workspace, as many bytes as the tensor.
  KILN_HOST_DEVICE int64_t workspaceBytes() const { return first && second ? bytes : 0; }
};

// `in` and `out` are the layer's input and output dims, as inference computed them (it has
// checked that both permutations are valid for their ranks).
KILN_HOST_DEVICE inline Plan plan(const ShuffleParams& p, const Dims& in, const Dims& out,
                                  size_t elemSize) {
  Plan s;
  s.elemSize = static_cast<int64_t>(elemSize);
  s.bytes = s.elemSize;
  for (int32_t i = 0; i < in.nbDims; ++i) s.bytes *= in.d[i];
  s.first = p.hasFirstTranspose && !isIdentity(p.firstTranspose, in.nbDims);
  s.second = p.hasSecondTranspose && !isIdentity(p.secondTranspose, out.nbDims);
  if (s.first) s.p1 = permutation(in, p.firstTranspose);
  if (s.second) {
    // Dims before the second transpose: the output dims permuted back.
    Dims mid;
    mid.nbDims = out.nbDims;
    for (int32_t i = 0; i < out.nbDims; ++i) mid.d[p.secondTranspose[i]] = out.d[i];
    s.p2 = permutation(mid, p.secondTranspose);
  }
  return s;
}

// Whether the shuffle of a channels-last rank-4 input `in` ([N, C, H, W] logically, N, H, W, C in
// memory) writes its linear output `out` in exactly the input's memory order, so that the layer is
// one plain copy of the input's bytes: ViT's patch embedding flattened to tokens ([N, C, H, W]
// reshaped to [N, C, H W], transposed to [N, H W, C]), or a permute (0, 2, 3, 1) to [N, H, W, C].
// Each logical axis is followed to its stride in the input's memory through the first transpose,
// the reshape (a view only where the axes it merges are contiguous in that memory, as a strided
// view's reshape must be) and the second transpose; the output is in order when those strides are
// its own row-major ones. Host code (tactic selection).
inline bool channelsLastInOrder(const ShuffleParams& p, const Dims& in, const Dims& out) {
  if (in.nbDims != 4) return false;
  const int64_t c = in.d[1], h = in.d[2], w = in.d[3];
  const int64_t memory[4] = {h * w * c, 1, w * c, c};  // strides of N, C, H, W in NHWC memory
  // After the first transpose.
  int32_t rank = 4;
  int64_t dims[Dims::kMaxDims] = {}, strides[Dims::kMaxDims] = {};
  for (int32_t i = 0; i < 4; ++i) {
    const int32_t from = p.hasFirstTranspose ? p.firstTranspose[i] : i;
    if (from < 0 || from >= 4) return false;
    dims[i] = in.d[from];
    strides[i] = memory[from];
  }
  // The dims before the second transpose: the output's, permuted back.
  Dims mid = out;
  if (p.hasSecondTranspose)
    for (int32_t i = 0; i < out.nbDims; ++i) {
      if (p.secondTranspose[i] < 0 || p.secondTranspose[i] >= out.nbDims) return false;
      mid.d[p.secondTranspose[i]] = out.d[i];
    }
  int64_t midStrides[Dims::kMaxDims] = {};
  if (p.hasReshape) {
    // Axes of size 1 carry no stride; the rest are grouped into runs of equal products.
    int64_t ad[Dims::kMaxDims] = {}, as[Dims::kMaxDims] = {};
    int32_t na = 0;
    for (int32_t i = 0; i < rank; ++i)
      if (dims[i] != 1) {
        ad[na] = dims[i];
        as[na++] = strides[i];
      }
    int32_t i = 0, j = 0;
    while (j < mid.nbDims) {
      if (mid.d[j] == 1) {
        midStrides[j++] = 0;
        continue;
      }
      if (i >= na) return false;
      const int32_t i0 = i, j0 = j;
      int64_t pa = ad[i], pm = mid.d[j];
      while (pa != pm) {
        if (pa < pm) {
          if (++i >= na) return false;
          pa *= ad[i];
        } else {
          if (++j >= mid.nbDims) return false;
          pm *= mid.d[j];
        }
      }
      for (int32_t k = i0; k < i; ++k)
        if (as[k] != as[k + 1] * ad[k + 1]) return false;  // merged axes not contiguous
      int64_t s = as[i];
      for (int32_t k = j; k >= j0; --k) {
        midStrides[k] = s;
        s *= mid.d[k];
      }
      ++i;
      ++j;
    }
    if (i != na) return false;
  } else {
    if (mid.nbDims != rank) return false;
    for (int32_t k = 0; k < rank; ++k) {
      if (mid.d[k] != dims[k]) return false;
      midStrides[k] = strides[k];
    }
  }
  // The output's strides against its own row-major ones (axes of size 1 aside).
  int64_t own = 1;
  for (int32_t k = out.nbDims - 1; k >= 0; --k) {
    const int64_t s = midStrides[p.hasSecondTranspose ? p.secondTranspose[k] : k];
    if (out.d[k] != 1 && s != own) return false;
    own *= out.d[k];
  }
  return true;
}

}  // namespace kiln::ops::shuffle
