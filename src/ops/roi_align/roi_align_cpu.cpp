// CPU RoiAlign (ONNX opset 16): bilinear samples on a regular grid in each output bin, averaged
// or maxed, by the rules of roi_align_semantics.h (shared with the CUDA kernel; max mode: a NaN
// among the samples wins). fp32 linear X and rois, int32 or int64 batch indices.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/roi_align/roi_align_semantics.h"

namespace kiln::cpu {
namespace {

namespace sem = ops::roi_align;

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
      if (!sem::finiteRoi(rois + r * 4))
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
    const bool maxMode = p_.mode != RoiAlignMode::kAVERAGE;
    for (int64_t r = 0; r < rois_; ++r) {
      const sem::Bins g =
          sem::bins(rois + r * 4, p_.spatialScale, p_.halfPixel, oh, ow, p_.samplingRatio);
      if (!g.withinLimits())
        return invalidArgument("roi_align: roi " + std::to_string(r) + " needs " +
                               std::to_string(g.gridHd) + " x " + std::to_string(g.gridWd) +
                               " samples per bin, more than the limit of 2^24; it is far larger "
                               "than the feature map");
      const float* xb = x + batchIndex(inputs[2], r) * channels_ * plane;
      for (int64_t c = 0; c < channels_; ++c) {
        const float* xc = xb + c * plane;
        const int64_t width = width_;
        auto pixel = [xc, width](int64_t py, int64_t px) {
          return static_cast<double>(xc[py * width + px]);
        };
        for (int64_t ph = 0; ph < oh; ++ph) {
          int64_t yLo, yHi;
          sem::sampleRange(g.startH + ph * g.binH, g.binH / static_cast<double>(g.gridH), g.gridH,
                           height_, yLo, yHi);
          for (int64_t pw = 0; pw < ow; ++pw) {
            int64_t xLo, xHi;
            sem::sampleRange(g.startW + pw * g.binW, g.binW / static_cast<double>(g.gridW), g.gridW,
                             width_, xLo, xHi);
            const double value =
                sem::binValue(g, ph, pw, yLo, yHi, xLo, xHi, height_, width_, maxMode, pixel);
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

std::span<const kiln::Tactic> kiln::ops::RoiAlign::cpuTactics() { return cpu::kTactics; }
