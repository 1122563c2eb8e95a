// Select's broadcasting (ONNX Where: numpy rules, trailing dims aligned), shared by its CPU and
// CUDA kernels (select_cpu.cpp, select_cuda.cu). Any non-zero condition byte counts as true.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/types.h"

namespace kiln::ops::select {

// The strides, in elements, of a row-major input with dims `d` along each of the output's
// `outRank` dims (trailing dims aligned); 0 where the input is broadcast (missing or 1).
KILN_HOST_DEVICE inline void broadcastStrides(const Dims& d, int32_t outRank, int64_t* strides) {
  int64_t own[Dims::kMaxDims] = {};
  int64_t s = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    own[i] = s;
    s *= d.d[i];
  }
  const int32_t shift = outRank - d.nbDims;
  for (int32_t i = 0; i < outRank; ++i) {
    const int32_t j = i - shift;
    strides[i] = (j < 0 || d.d[j] == 1) ? 0 : own[j];
  }
}

}  // namespace kiln::ops::select
