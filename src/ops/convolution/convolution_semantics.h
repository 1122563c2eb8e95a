// The rules convolution's shape rule (convolution_shape.cpp), CPU kernels (convolution_cpu.cpp)
// and CUDA kernels (convolution_cuda.*) share: where each input sits, which input element an
// output element reads through each kernel tap, when a tap reads padding (it then adds nothing),
// which input channels a group reads, and the epilogue of one output element. Each backend keeps
// its own accumulation (the CPU reference sums in double, the CUDA kernels in float). Plain types,
// host and device (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/convolution.h"
#include "ops/activation/activation_semantics.h"

namespace kiln::ops::convolution {

// The input index of each optional input (-1 when absent): X, W, then bias [K] when there is one
// more input than X, W and the residual, then the residual (the last input) when hasResidual.
struct InputSlots {
  int32_t bias = -1;
  int32_t residual = -1;
  KILN_HOST_DEVICE InputSlots(const ConvolutionParams& p, int64_t nbInputs) {
    const int64_t withoutBias = p.hasResidual ? 3 : 2;
    if (nbInputs > withoutBias) bias = 2;
    if (p.hasResidual) residual = static_cast<int32_t>(nbInputs) - 1;
  }
};

// One output element's epilogue: the accumulated sum (bias included) plus the residual's element,
// then the fused activation. P: ConvolutionParams, or the CUDA tactics' geometry, which carries
// the same activation fields.
template <class P>
KILN_HOST_DEVICE inline float epilogue(const P& p, float sum, float residual) {
  return activation::fusedActivation(p, sum + residual);
}

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
