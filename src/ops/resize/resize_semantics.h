// Resize's per-axis rules (ONNX Resize, opsets 11-17), shared by its CPU and CUDA kernels
// (resize_cpu.cpp, resize_cuda.cu): where output index o of an axis reads, for every coordinate
// transform, nearest rounding and the linear mode. Coordinates are in double as the ONNX
// reference computes them (its test data decides rounding ties, e.g. x_original == 0.5 exactly).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/resize.h"

namespace kiln::ops::resize {

// Input coordinate of output index x along one axis of `in` input and `out` output elements.
KILN_HOST_DEVICE inline double inputCoordinate(ResizeCoordinates mode, int64_t x, int64_t in,
                                               int64_t out, float scale) {
  // A scale of 0 means "not given": the factor is then output / input (ONNX's sizes input).
  const double s =
      scale > 0.f ? static_cast<double>(scale) : static_cast<double>(out) / static_cast<double>(in);
  const double xd = static_cast<double>(x);
  switch (mode) {
    case ResizeCoordinates::kHALF_PIXEL:
      return (xd + 0.5) / s - 0.5;
    case ResizeCoordinates::kASYMMETRIC:
      return xd / s;
    case ResizeCoordinates::kALIGN_CORNERS:
      // The ONNX reference (and so its test data) takes the resized length as input * scale,
      // unrounded; with scales from sizes this is the output length.
      {
        // in * scale == 1 makes the ratio 0/0 or x/0; such an axis reads element 0 instead of
        // converting NaN or infinity to an index.
        const double c =
            out == 1 ? 0.0 : xd * static_cast<double>(in - 1) / (static_cast<double>(in) * s - 1.0);
        return c - c == 0.0 ? c : 0.0;  // finite
      }
    case ResizeCoordinates::kPYTORCH_HALF_PIXEL:
      return out > 1 ? (xd + 0.5) / s - 0.5 : 0.0;
    case ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN:
      return (xd + 0.5) / s;
  }
  return 0.0;
}

KILN_HOST_DEVICE inline int64_t nearestIndex(ResizeRounding rounding, double x, int64_t in) {
  // Clamp first so that the conversion to an integer is defined for any scale.
  const double hiX = static_cast<double>(in);
  x = x < -1.0 ? -1.0 : (hiX < x ? hiX : x);
  const double fl = floor(x);
  const double frac = x - fl;
  double r = fl;
  if (frac != 0.0) {
    switch (rounding) {
      case ResizeRounding::kROUND_PREFER_FLOOR:
        r = frac <= 0.5 ? fl : fl + 1;
        break;
      case ResizeRounding::kROUND_PREFER_CEIL:
        r = frac < 0.5 ? fl : fl + 1;
        break;
      case ResizeRounding::kFLOOR:
        break;
      case ResizeRounding::kCEIL:
        r = fl + 1;
        break;
    }
  }
  const int64_t i = static_cast<int64_t>(r);
  return i < 0 ? 0 : (in - 1 < i ? in - 1 : i);
}

// Where output index o of an axis reads: input elements lo (weight 1 - w) and hi (weight w).
// w == 0 reads lo alone: always in nearest mode and on an axis that keeps its size and scale.
struct Tap {
  int64_t lo = 0, hi = 0;
  double w = 0.0;
};

KILN_HOST_DEVICE inline Tap tap(ResizeMode mode, ResizeCoordinates coordinates,
                                ResizeRounding rounding, int64_t o, int64_t in, int64_t out,
                                float scale) {
  const double x = inputCoordinate(coordinates, o, in, out, scale);
  Tap t;
  if (mode == ResizeMode::kNEAREST) {
    t.lo = t.hi = nearestIndex(rounding, x, in);
  } else if (out == in && (scale == 1.f || scale == 0.f)) {
    // An axis that keeps its size and scale is copied, not blended: this only matters for
    // tf_half_pixel_for_nn (x + 0.5), and it is what onnxruntime does for N and C.
    t.lo = t.hi = o;
  } else {
    // ONNX pads the edges for linear, which is the same as clamping the coordinate.
    const double hiX = static_cast<double>(in - 1);
    const double c = x < 0.0 ? 0.0 : (hiX < x ? hiX : x);
    t.lo = static_cast<int64_t>(floor(c));
    t.hi = in - 1 < t.lo + 1 ? in - 1 : t.lo + 1;
    t.w = c - static_cast<double>(t.lo);
  }
  return t;
}

}  // namespace kiln::ops::resize
