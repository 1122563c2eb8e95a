// Expand's rules, shared by its CPU and CUDA kernels (expand_cpu.cpp, expand_cuda.cu): numpy
// broadcasting with trailing dims aligned. The input is seen at the output's rank with leading
// 1s; along each axis, output coordinate j reads j, or 0 where that input dim is 1.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/types.h"

namespace kiln::ops::expand {

// The input dims `in` seen at rank `rank` (>= in.nbDims): leading 1s where it has fewer dims.
KILN_HOST_DEVICE inline Dims alignedInput(const Dims& in, int32_t rank) {
  Dims d;
  d.nbDims = rank;
  const int32_t lead = rank - in.nbDims;
  for (int32_t i = 0; i < rank; ++i) d.d[i] = i < lead ? 1 : in.d[i - lead];
  return d;
}

// The input coordinate of output coordinate j along an axis whose (aligned) input dim is inDim.
KILN_HOST_DEVICE inline int64_t source(int64_t j, int64_t inDim) { return inDim == 1 ? 0 : j; }

}  // namespace kiln::ops::expand
