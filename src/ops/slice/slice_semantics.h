// Slice's rule, shared by its CPU and CUDA kernels (slice_cpu.cpp, slice_cuda.cu): output
// element j of an axis reads input element start + j * step, the start given by
// SliceParams::startOn. Inference has proved every such read inside the input.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::slice {

KILN_HOST_DEVICE inline int64_t source(int64_t start, int64_t step, int64_t j) {
  return start + j * step;
}

}  // namespace kiln::ops::slice
