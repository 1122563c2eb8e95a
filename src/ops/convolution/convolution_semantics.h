// The rules convolution's CPU kernels (convolution_cpu.cpp) and CUDA kernels
// (convolution_cuda.cu) share: which input element an output element reads through each kernel
// tap, when a tap reads padding (it then adds nothing), and which input channels a group reads.
// Index rules only: each backend keeps its own accumulation (the CPU reference sums in double,
// the CUDA kernels in float). Plain types, host and device (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::convolution {

// Input coordinate along one axis that output coordinate `o` reads through kernel tap `t`: the
// window starts at o * stride - padBegin and its taps lie `dilation` apart. It may fall in the
// padding (see KILN_CONVOLUTION_IS_PADDING).
KILN_HOST_DEVICE inline int64_t inputIndex(int64_t o, int64_t t, int64_t stride, int64_t padBegin,
                                           int64_t dilation) {
  return o * stride - padBegin + t * dilation;
}

// True when input coordinate `i` lies in the padding of an axis of `extent` elements: the tap
// reads zero, so it is skipped. A macro, not a function: nvcc computes a bool that an inline
// function returns as a value (shift, select, or) instead of branching on the two compares, which
// made the CUDA kernel's innermost loop longer (56 more SASS instructions in ConvOp<__half>).
#define KILN_CONVOLUTION_IS_PADDING(i, extent) ((i) < 0 || (i) >= (extent))

// First input channel of the group that output channel `k` belongs to, with `groupOut` output and
// `groupIn` input channels per group.
KILN_HOST_DEVICE inline int64_t groupFirstChannel(int64_t k, int64_t groupOut, int64_t groupIn) {
  return (k / groupOut) * groupIn;
}

}  // namespace kiln::ops::convolution
