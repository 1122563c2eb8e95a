// RoiAlign's rules (ONNX opset 16), shared by its CPU and CUDA kernels (roi_align_cpu.cpp,
// roi_align_cuda.cu): each roi's bins and sampling grid, the bilinear sample, which samples can
// touch the map, and the value of one output bin. Max mode follows the ONNX reference and
// onnxruntime: per sample, the largest of the four weighted corner values, then the largest over
// the bin's samples; a NaN among them wins, as in kiln's MaxPool, ReduceMax and Max
// (onnxruntime's std::max keeps or drops a NaN depending on where it stands). Everything is in
// double, in one order, on both backends.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::roi_align {

KILN_HOST_DEVICE inline bool finite(double x) { return x - x == 0.0; }

// The larger of a and b; a NaN in either wins.
KILN_HOST_DEVICE inline double maxKeepingNan(double a, double b) {
  return (a > b || a != a) ? a : b;
}

// A roi with a non-finite coordinate is invalid (the CPU fails the run; the GPU writes zeros and
// sets its error flag), as is a batch index outside [0, N).
KILN_HOST_DEVICE inline bool finiteRoi(const float* roi) {
  for (int k = 0; k < 4; ++k)
    if (!finite(roi[k])) return false;
  return true;
}

// A corrupt or hostile roi could ask for an adaptive grid of billions of samples per bin; past
// this many samples per bin the roi is invalid too, instead of hanging.
constexpr double kMaxGridAxis = 16777216.0;
constexpr double kMaxGridSamples = 16777216.0;

// One roi's bins: the top-left corner of the roi, the size of a bin and the sampling grid in
// each bin, in feature-map pixels.
struct Bins {
  double startH = 0.0, startW = 0.0;
  double binH = 0.0, binW = 0.0;
  double gridHd = 0.0, gridWd = 0.0;  // as computed, before the limits are checked
  int64_t gridH = 0, gridW = 0;       // valid once withinLimits()
  double count = 1.0;                 // samples per bin, at least 1 (the average's divisor)
  KILN_HOST_DEVICE bool withinLimits() const {
    return gridHd <= kMaxGridAxis && gridWd <= kMaxGridAxis && !(gridHd * gridWd > kMaxGridSamples);
  }
};

// roi: x1, y1, x2, y2 (finite). outputHeight, outputWidth > 0.
KILN_HOST_DEVICE inline Bins bins(const float* roi, double spatialScale, bool halfPixel,
                                  int64_t outputHeight, int64_t outputWidth,
                                  int32_t samplingRatio) {
  Bins g;
  const double offset = halfPixel ? 0.5 : 0.0;
  g.startW = roi[0] * spatialScale - offset;
  g.startH = roi[1] * spatialScale - offset;
  const double endW = roi[2] * spatialScale - offset, endH = roi[3] * spatialScale - offset;
  double roiW = endW - g.startW, roiH = endH - g.startH;
  if (!halfPixel) {
    // Legacy mode: a roi is at least one pixel, as in Caffe2 and opset 10.
    roiW = roiW < 1.0 ? 1.0 : roiW;
    roiH = roiH < 1.0 ? 1.0 : roiH;
  }
  g.binH = roiH / static_cast<double>(outputHeight);
  g.binW = roiW / static_cast<double>(outputWidth);
  // A negative extent (x2 < x1 in half-pixel mode) gives an empty grid: the bin is 0.
  const double ch = ceil(g.binH), cw = ceil(g.binW);
  g.gridHd = samplingRatio > 0 ? samplingRatio : (0.0 < ch ? ch : 0.0);
  g.gridWd = samplingRatio > 0 ? samplingRatio : (0.0 < cw ? cw : 0.0);
  if (g.withinLimits()) {
    g.gridH = static_cast<int64_t>(g.gridHd);
    g.gridW = static_cast<int64_t>(g.gridWd);
    g.count = static_cast<double>(g.gridH * g.gridW > 1 ? g.gridH * g.gridW : 1);
  }
  return g;
}

// The sample indices k in [0, grid) whose coordinate base + (k + 0.5) * step may lie in
// [-1, extent]; every other sample has all bilinear weights 0. One index of margin on each side
// absorbs rounding (bilinear() still zeroes any sample outside). Without this a roi far larger
// than the feature map (a hostile spatial_scale) walks an adaptive grid of millions of samples
// per bin, nearly all of them outside the map.
KILN_HOST_DEVICE inline void sampleRange(double base, double step, int64_t grid, int64_t extent,
                                         int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = grid;
  if (grid == 0 || step == 0.0) return;
  double a = (-1.0 - base) / step - 0.5, b = (static_cast<double>(extent) - base) / step - 0.5;
  if (!finite(a) || !finite(b)) return;
  if (a > b) {
    const double t = a;
    a = b;
    b = t;
  }
  const double g = static_cast<double>(grid);
  const double l = floor(a) - 1.0, h = ceil(b) + 2.0;
  lo = static_cast<int64_t>(l < 0.0 ? 0.0 : (g < l ? g : l));
  const int64_t hiIndex = static_cast<int64_t>(h < 0.0 ? 0.0 : (g < h ? g : h));
  hi = lo < hiIndex ? hiIndex : lo;
}

// The bilinear sample of an H x W plane at (y, x): corner k (0..3) is pixel (y[k >> 1], x[k & 1])
// with weight w[k]. All weights are 0 outside [-1, H] x [-1, W] (the corners are then pixel
// (0, 0), read with weight 0: 0 * inf is NaN there too), coordinates clamped to the plane inside
// it (onnxruntime's rule).
struct Sample {
  int64_t y[2] = {0, 0}, x[2] = {0, 0};
  double w[4] = {0.0, 0.0, 0.0, 0.0};
};

KILN_HOST_DEVICE inline Sample bilinear(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width))
    return s;
  y = y < 0.0 ? 0.0 : y;
  x = x < 0.0 ? 0.0 : x;
  int64_t yLow = static_cast<int64_t>(y), xLow = static_cast<int64_t>(x), yHigh, xHigh;
  if (yLow >= height - 1) {
    yHigh = yLow = height - 1;
    y = static_cast<double>(yLow);
  } else {
    yHigh = yLow + 1;
  }
  if (xLow >= width - 1) {
    xHigh = xLow = width - 1;
    x = static_cast<double>(xLow);
  } else {
    xHigh = xLow + 1;
  }
  const double ly = y - static_cast<double>(yLow), lx = x - static_cast<double>(xLow);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.y[0] = yLow;
  s.y[1] = yHigh;
  s.x[0] = xLow;
  s.x[1] = xHigh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// The value of output bin (ph, pw) of a roi with bins `g` (withinLimits) on an H x W plane with
// pixels (H * W > 0): the samples [yLo, yHi) x [xLo, xHi) of its grid (sampleRange; the others
// lie outside the map), averaged over the whole grid or maxed. pixel(y, x) returns the plane's
// value at (y, x) as a double.
template <class Pixel>
KILN_HOST_DEVICE inline double binValue(const Bins& g, int64_t ph, int64_t pw, int64_t yLo,
                                        int64_t yHi, int64_t xLo, int64_t xHi, int64_t height,
                                        int64_t width, bool maxMode, const Pixel& pixel) {
  double value = 0.0;
  // Skipped samples lie outside the map: each adds 0 to a sum, or is a 0 candidate for the max.
  bool first = (yHi - yLo) * (xHi - xLo) == g.gridH * g.gridW;
  for (int64_t iy = yLo; iy < yHi; ++iy) {
    const double sy = g.startH + ph * g.binH + (iy + 0.5) * g.binH / g.gridH;
    for (int64_t ix = xLo; ix < xHi; ++ix) {
      const double sx = g.startW + pw * g.binW + (ix + 0.5) * g.binW / g.gridW;
      const Sample s = bilinear(sy, sx, height, width);
      double v4[4];
      for (int k = 0; k < 4; ++k) v4[k] = s.w[k] * pixel(s.y[k >> 1], s.x[k & 1]);
      if (!maxMode) {
        for (int k = 0; k < 4; ++k) value += v4[k];
      } else {
        double v = v4[0];
        for (int k = 1; k < 4; ++k) v = maxKeepingNan(v, v4[k]);
        value = first ? v : maxKeepingNan(value, v);
        first = false;
      }
    }
  }
  if (!maxMode) value /= g.count;
  return value;
}

}  // namespace kiln::ops::roi_align
