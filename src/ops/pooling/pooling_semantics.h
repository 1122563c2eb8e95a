// The rules pooling's CPU kernels (pooling_cpu.cpp) and CUDA kernels (pooling_cuda.cu) share:
// each output's window and the part of it inside the image (padding never takes part in a max or
// a sum), the divisor of an average (with or without the padding), and the max in which NaN wins.
// Rules only: each backend keeps its own accumulation (the CPU reference sums in double, the CUDA
// kernel in float). Plain types, host and device (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::pooling {

// One axis of the window of an output element: [begin, end) in input coordinates, where begin
// may be negative and end may pass the image (the padding), and [first, last), the part inside
// the image [0, extent): the elements the window reads. Shape inference guarantees that every
// window reads at least one.
struct Window {
  int64_t begin, end;
  int64_t first, last;
};

// The window of output coordinate `o` along an axis of `extent` input elements.
KILN_HOST_DEVICE inline Window window(int64_t o, int64_t kernel, int64_t stride, int64_t padBegin,
                                      int64_t extent) {
  Window w;
  w.begin = o * stride - padBegin;
  w.end = w.begin + kernel;
  w.first = w.begin > 0 ? w.begin : 0;
  w.last = w.end < extent ? w.end : extent;
  return w;
}

// What an average divides by: with countIncludePad the window clipped to the padded input (the
// image plus padBottom / padRight; ceil mode may run a window past those too), else the number
// of elements it reads.
KILN_HOST_DEVICE inline int64_t averageCount(const Window& h, const Window& w, int64_t height,
                                             int64_t width, int64_t padBottom, int64_t padRight,
                                             bool countIncludePad) {
  if (countIncludePad) {
    const int64_t hEnd = h.end < height + padBottom ? h.end : height + padBottom;
    const int64_t wEnd = w.end < width + padRight ? w.end : width + padRight;
    return (hEnd - h.begin) * (wEnd - w.begin);
  }
  return (h.last - h.first) * (w.last - w.first);
}

// NaN test that needs no <cmath> on either compiler.
KILN_HOST_DEVICE inline bool isNan(float v) { return v != v; }

// One step of the max (start from -infinity): v wins when it is larger or NaN, so NaN propagates,
// as in ONNX Runtime and numpy's max; once the max is NaN the caller may stop.
KILN_HOST_DEVICE inline float maxStep(float m, float v) { return (v > m || isNan(v)) ? v : m; }

}  // namespace kiln::ops::pooling
