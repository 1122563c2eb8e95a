// The softmax rules, shared by the CPU reference (softmax_cpu.cpp, which evaluates in double) and
// the CUDA kernels (softmax_cuda.cu, in float), so that the two backends cannot drift apart: each
// rule is templated on the value type V (double or float). Numerically stable: the maximum along
// the axis is subtracted before exp; log-softmax is (x - m) - log(sum). A NaN never wins the
// maximum but still makes the sum, and so every output of its slice, NaN; a slice that is all
// -inf gives NaN.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace kiln::ops::softmax {

KILN_HOST_DEVICE inline float expOf(float v) { return expf(v); }
KILN_HOST_DEVICE inline double expOf(double v) { return exp(v); }
KILN_HOST_DEVICE inline float logOf(float v) { return logf(v); }
KILN_HOST_DEVICE inline double logOf(double v) { return log(v); }

// Whether v replaces the running maximum m (from -inf): a NaN never does.
template <class V>
KILN_HOST_DEVICE inline bool raisesMax(V m, V v) {
  return v > m;
}

// One term of the sum along the axis: exp(x - m).
template <class V>
KILN_HOST_DEVICE inline V sumTerm(V x, V m) {
  return expOf(x - m);
}

// softmax: exp(x - m) / sum.
template <class V>
KILN_HOST_DEVICE inline V softmaxValue(V x, V m, V sum) {
  return expOf(x - m) / sum;
}

// log-softmax, log(exp(x - m) / sum) = (x - m) - log(sum): no exp of a large value, no log of 0.
// logSum is logOf(sum), taken once per slice.
template <class V>
KILN_HOST_DEVICE inline V logSoftmaxValue(V x, V m, V logSum) {
  return (x - m) - logSum;
}

}  // namespace kiln::ops::softmax
