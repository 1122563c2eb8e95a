// CPU RoiAlign (ONNX opset 16): bilinear samples on a regular grid in each output bin, averaged
// or maxed. Max mode follows the ONNX reference and onnxruntime: per sample, the largest of the
// four weighted corner values, then the largest over the bin's samples. A NaN among them wins,
// as in kiln's MaxPool, ReduceMax and Max (onnxruntime's std::max keeps or drops a NaN depending
// on where it stands); src/backends/cuda/data_movement_resize.cu does the same. fp32 linear X and
// rois, int32 or int64 batch indices.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// The larger of a and b; a NaN in either wins.
double maxKeepingNan(double a, double b) { return (a > b || a != a) ? a : b; }

// A corrupt or hostile roi could ask for an adaptive grid of billions of samples per bin; past
// this many samples per bin the run fails instead of hanging.
constexpr double kMaxGridAxis = 16777216.0;
constexpr double kMaxGridSamples = 16777216.0;

struct Sample {
  int64_t pos[4] = {};  // y_low*W+x_low, y_low*W+x_high, y_high*W+x_low, y_high*W+x_high
  double w[4] = {};
};

// The bilinear sample of an H x W plane at (y, x): all weights 0 outside [-1, H] x [-1, W],
// coordinates clamped to the plane inside it (onnxruntime's rule).
Sample bilinear(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width))
    return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
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
  s.pos[0] = yLow * width + xLow;
  s.pos[1] = yLow * width + xHigh;
  s.pos[2] = yHigh * width + xLow;
  s.pos[3] = yHigh * width + xHigh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

// The sample indices k in [0, grid) whose coordinate base + (k + 0.5) * step may lie in
// [-1, extent]; every other sample has all bilinear weights 0. One index of margin on each side
// absorbs rounding (bilinear() still zeroes any sample outside). Without this a roi far larger
// than the feature map (a hostile spatial_scale) walks an adaptive grid of millions of samples
// per bin, nearly all of them outside the map.
void sampleRange(double base, double step, int64_t grid, int64_t extent, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = grid;
  if (grid == 0 || step == 0.0) return;
  double a = (-1.0 - base) / step - 0.5, b = (static_cast<double>(extent) - base) / step - 0.5;
  if (!std::isfinite(a) || !std::isfinite(b)) return;
  if (a > b) std::swap(a, b);
  const double g = static_cast<double>(grid);
  lo = static_cast<int64_t>(std::clamp(std::floor(a) - 1.0, 0.0, g));
  hi = std::max(lo, static_cast<int64_t>(std::clamp(std::ceil(b) + 2.0, 0.0, g)));
}

class RoiAlignReference final : public Kernel {
 public:
  RoiAlignReference(const RoiAlignParams& p, const Dims& x, int64_t rois, bool int64Indices)
      : p_(p),
        batch_(x.d[0]),
        channels_(x.d[1]),
        height_(x.d[2]),
        width_(x.d[3]),
        rois_(rois),
        int64Indices_(int64Indices) {}

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* x = static_cast<const float*>(inputs[0]);
    const auto* rois = static_cast<const float*>(inputs[1]);
    auto* y = static_cast<float*>(outputs[0]);
    // Check every roi before writing anything, so a failure leaves no half-written output.
    for (int64_t r = 0; r < rois_; ++r) {
      const int64_t b = batchIndex(inputs[2], r);
      if (b < 0 || b >= batch_)
        return invalidArgument("roi_align: batch_indices[" + std::to_string(r) + "] is " +
                               std::to_string(b) + ", outside [0, " + std::to_string(batch_) + ")");
      for (int i = 0; i < 4; ++i)
        if (!std::isfinite(rois[r * 4 + i]))
          return invalidArgument("roi_align: roi " + std::to_string(r) +
                                 " has a non-finite coordinate");
    }
    const int64_t oh = p_.outputHeight, ow = p_.outputWidth;
    const int64_t plane = height_ * width_;
    if (plane == 0) {
      // No pixels: every sample falls outside the map and every bin is 0.
      std::fill_n(y, rois_ * channels_ * p_.outputHeight * p_.outputWidth, 0.f);
      return Status::ok();
    }
    for (int64_t r = 0; r < rois_; ++r) {
      const double scale = p_.spatialScale;
      const double offset = p_.halfPixel ? 0.5 : 0.0;
      const float* roi = rois + r * 4;
      const double startW = roi[0] * scale - offset, startH = roi[1] * scale - offset;
      const double endW = roi[2] * scale - offset, endH = roi[3] * scale - offset;
      double roiW = endW - startW, roiH = endH - startH;
      if (!p_.halfPixel) {
        // Legacy mode: a roi is at least one pixel, as in Caffe2 and opset 10.
        roiW = std::max(roiW, 1.0);
        roiH = std::max(roiH, 1.0);
      }
      const double binH = roiH / static_cast<double>(oh);
      const double binW = roiW / static_cast<double>(ow);
      // A negative extent (x2 < x1 in half-pixel mode) gives an empty grid: the bin is 0.
      const double gridHd =
          p_.samplingRatio > 0 ? p_.samplingRatio : std::max(0.0, std::ceil(binH));
      const double gridWd =
          p_.samplingRatio > 0 ? p_.samplingRatio : std::max(0.0, std::ceil(binW));
      if (!(gridHd <= kMaxGridAxis) || !(gridWd <= kMaxGridAxis) ||
          gridHd * gridWd > kMaxGridSamples)
        return invalidArgument("roi_align: roi " + std::to_string(r) + " needs " +
                               std::to_string(gridHd) + " x " + std::to_string(gridWd) +
                               " samples per bin, more than the limit of 2^24; it is far larger "
                               "than the feature map");
      const auto gridH = static_cast<int64_t>(gridHd);
      const auto gridW = static_cast<int64_t>(gridWd);
      const double count = static_cast<double>(std::max<int64_t>(gridH * gridW, 1));
      const float* xb = x + batchIndex(inputs[2], r) * channels_ * plane;
      for (int64_t c = 0; c < channels_; ++c) {
        const float* xc = xb + c * plane;
        for (int64_t ph = 0; ph < oh; ++ph) {
          int64_t yLo, yHi;
          sampleRange(startH + ph * binH, binH / static_cast<double>(gridH), gridH, height_, yLo,
                      yHi);
          for (int64_t pw = 0; pw < ow; ++pw) {
            int64_t xLo, xHi;
            sampleRange(startW + pw * binW, binW / static_cast<double>(gridW), gridW, width_, xLo,
                        xHi);
            double value = 0.0;
            // Skipped samples lie outside the map: each adds 0 to a sum, or is a 0 candidate
            // for the max.
            bool first = (yHi - yLo) * (xHi - xLo) == gridH * gridW;
            for (int64_t iy = yLo; iy < yHi; ++iy) {
              const double sy = startH + ph * binH + (iy + 0.5) * binH / gridH;
              for (int64_t ix = xLo; ix < xHi; ++ix) {
                const double sx = startW + pw * binW + (ix + 0.5) * binW / gridW;
                const Sample s = bilinear(sy, sx, height_, width_);
                if (p_.mode == RoiAlignMode::kAVERAGE) {
                  for (int k = 0; k < 4; ++k) value += s.w[k] * xc[s.pos[k]];
                } else {
                  double v = s.w[0] * xc[s.pos[0]];
                  for (int k = 1; k < 4; ++k) v = maxKeepingNan(v, s.w[k] * xc[s.pos[k]]);
                  value = first ? v : maxKeepingNan(value, v);
                  first = false;
                }
              }
            }
            if (p_.mode == RoiAlignMode::kAVERAGE) value /= count;
            y[((r * channels_ + c) * oh + ph) * ow + pw] = static_cast<float>(value);
          }
        }
      }
    }
    return Status::ok();
  }

 private:
  int64_t batchIndex(const void* indices, int64_t r) const {
    return int64Indices_ ? static_cast<const int64_t*>(indices)[r]
                         : static_cast<const int32_t*>(indices)[r];
  }

  RoiAlignParams p_;
  int64_t batch_, channels_, height_, width_, rois_;
  bool int64Indices_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const RoiAlignParams* p =
      validate<RoiAlignParams>(c, "roi_align", 3, &ops::RoiAlign::infer, whyNot);
  if (!p || !allLinear(c, "roi_align", whyNot)) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT || c.inputs[1].type != DataType::kFLOAT ||
      c.outputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, "roi_align: the CPU kernel computes in fp32 only (X, rois, output)");
    return nullptr;
  }
  return std::make_unique<RoiAlignReference>(*p, c.inputs[0].dims, c.inputs[1].dims.d[0],
                                             c.inputs[2].type == DataType::kINT64);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> RoiAlign::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
