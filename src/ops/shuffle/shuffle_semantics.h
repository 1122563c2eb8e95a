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

}  // namespace kiln::ops::shuffle
