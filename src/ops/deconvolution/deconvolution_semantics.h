// The index rule deconvolution's (transposed convolution's) CPU kernels (deconvolution_cpu.cpp)
// and CUDA kernels (deconvolution_cuda.cu) share, in its two forms: scatter (input element i
// reaches output o = i * stride - padBegin + tap * dilation, what col2im does) and its inverse,
// gather (which input an output element reads through each tap, what the references do). Index
// rules only: each backend keeps its own accumulation. Plain types, host and device
// (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::deconvolution {

// Scatter: output coordinate along one axis that input coordinate `i` reaches through kernel tap
// `t`. It may fall outside the output (the pads crop it).
KILN_HOST_DEVICE inline int64_t targetIndex(int64_t i, int64_t t, int64_t stride, int64_t padBegin,
                                            int64_t dilation) {
  return i * stride - padBegin + t * dilation;
}

// Gather: input coordinate along one axis (of `extent` elements) that output coordinate `o` reads
// through kernel tap `t`, or -1 when no input reaches o through that tap (it falls between two
// strided inputs, or outside the input).
KILN_HOST_DEVICE inline int64_t sourceIndex(int64_t o, int64_t t, int64_t stride, int64_t padBegin,
                                            int64_t dilation, int64_t extent) {
  const int64_t v = o + padBegin - t * dilation;
  if (v < 0 || v % stride != 0) return -1;
  const int64_t i = v / stride;
  return i < extent ? i : -1;
}

}  // namespace kiln::ops::deconvolution
