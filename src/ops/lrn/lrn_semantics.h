// The rules of local response normalization across channels (ONNX LRN), shared by the CPU
// reference (lrn_cpu.cpp, which evaluates in double) and the CUDA kernel (lrn_cuda.cu, in float),
// so that the two backends cannot drift apart; the value rules are templated on the value type V.
//   The window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped to the
//   channels [0, C).
//   y = x / pow(bias + alpha / size * sum, beta), sum the squares of x over the window.
//   denominator() is that pow; each kernel divides x by it.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::lrn {

// The window of channel c: channels lo..hi (inclusive).
struct Window {
  int64_t lo = 0, hi = 0;
};
KILN_HOST_DEVICE inline int64_t channelsBefore(int32_t size) { return (size - 1) / 2; }
KILN_HOST_DEVICE inline int64_t channelsAfter(int32_t size) { return size / 2; }
KILN_HOST_DEVICE inline Window window(int64_t c, int64_t before, int64_t after, int64_t C) {
  return {c - before < 0 ? 0 : c - before, c + after > C - 1 ? C - 1 : c + after};
}

// alpha / size, in double.
KILN_HOST_DEVICE inline double alphaOverSize(float alpha, int32_t size) {
  return static_cast<double>(alpha) / size;
}

// The sum of load(j)^2 over the window, in V.
template <class V, class Load>
KILN_HOST_DEVICE inline V windowSumOfSquares(Window w, const Load& load) {
  V sum = 0;
  for (int64_t j = w.lo; j <= w.hi; ++j) {
    const V e = load(j);
    sum += e * e;
  }
  return sum;
}

KILN_HOST_DEVICE inline float powOf(float a, float b) { return powf(a, b); }
KILN_HOST_DEVICE inline double powOf(double a, double b) { return pow(a, b); }

// The denominator of y = x / denominator: pow(bias + alphaOverSize * sumOfSquares, beta).
template <class V>
KILN_HOST_DEVICE inline V denominator(V sumOfSquares, V alphaOverSize, V bias, V beta) {
  return powOf(bias + alphaOverSize * sumOfSquares, beta);
}

}  // namespace kiln::ops::lrn
