// CPU resize (ONNX Resize, opsets 11-17, nearest and linear): per axis, a table maps each output
// index to its input neighbours once at kernel creation; run() then only gathers. fp32 linear.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// Input coordinate of output index x along one axis, in double as the ONNX reference computes
// it (the test data decides rounding ties, e.g. x_original == 0.5 exactly).
double inputCoordinate(ResizeCoordinates mode, int64_t x, int64_t in, int64_t out, float scale) {
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
        // in * scale == 1 makes the ratio 0/0 or x/0; such an axis reads element 0 (as the
        // CUDA kernel does) instead of converting NaN or infinity to an index.
        const double c =
            out == 1 ? 0.0 : xd * static_cast<double>(in - 1) / (static_cast<double>(in) * s - 1.0);
        return std::isfinite(c) ? c : 0.0;
      }
    case ResizeCoordinates::kPYTORCH_HALF_PIXEL:
      return out > 1 ? (xd + 0.5) / s - 0.5 : 0.0;
    case ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN:
      return (xd + 0.5) / s;
  }
  return 0.0;
}

int64_t nearestIndex(ResizeRounding rounding, double x, int64_t in) {
  // Clamp first so that the conversion to an integer is defined for any scale.
  x = std::clamp(x, -1.0, static_cast<double>(in));
  const double fl = std::floor(x);
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
  return std::clamp<int64_t>(static_cast<int64_t>(r), 0, in - 1);
}

// Where output index o of one axis reads: lo (weight 1-w) and hi (weight w), in input elements
// already multiplied by the axis stride.
struct AxisTable {
  std::vector<int64_t> lo, hi;
  std::vector<double> w;
  bool interpolates = false;  // some w != 0: this axis takes part in the N-linear blend
};

class ResizeReference final : public Kernel {
 public:
  ResizeReference(const ResizeParams& p, const Dims& in, const Dims& out) : out_(out) {
    int64_t strides[Dims::kMaxDims] = {};
    rowMajorStrides(in, strides);
    for (int32_t a = 0; a < in.nbDims; ++a) {
      AxisTable t;
      const int64_t n = out.d[a], len = in.d[a];
      for (int64_t o = 0; o < n; ++o) {
        const double x = inputCoordinate(p.coordinates, o, len, n, p.scales[a]);
        if (p.mode == ResizeMode::kNEAREST) {
          const int64_t i = nearestIndex(p.rounding, x, len);
          t.lo.push_back(i * strides[a]);
          t.hi.push_back(i * strides[a]);
          t.w.push_back(0.0);
        } else if (n == len && (p.scales[a] == 1.f || p.scales[a] == 0.f)) {
          // An axis that keeps its size and scale is copied, not blended: this only matters for
          // tf_half_pixel_for_nn (x + 0.5), and it is what onnxruntime does for N and C.
          t.lo.push_back(o * strides[a]);
          t.hi.push_back(o * strides[a]);
          t.w.push_back(0.0);
        } else {
          // ONNX pads the edges for linear, which is the same as clamping the coordinate.
          const double c = std::clamp(x, 0.0, static_cast<double>(len - 1));
          const int64_t lo = static_cast<int64_t>(std::floor(c));
          const int64_t hi = std::min(lo + 1, len - 1);
          const double w = c - static_cast<double>(lo);
          t.lo.push_back(lo * strides[a]);
          t.hi.push_back(hi * strides[a]);
          t.w.push_back(w);
          if (w != 0.0) t.interpolates = true;
        }
      }
      if (t.interpolates) active_.push_back(a);
      axes_.push_back(std::move(t));
    }
  }

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* x = static_cast<const float*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    const int32_t rank = out_.nbDims;
    const int64_t total = volume(out_);
    if (total == 0) return Status::ok();
    int64_t coord[Dims::kMaxDims] = {};
    const int64_t corners = int64_t{1} << active_.size();
    for (int64_t i = 0; i < total; ++i) {
      int64_t base = 0;
      for (int32_t a = 0; a < rank; ++a) base += axes_[a].lo[coord[a]];
      double sum = 0.0;
      for (int64_t corner = 0; corner < corners; ++corner) {
        int64_t offset = base;
        double weight = 1.0;
        for (size_t k = 0; k < active_.size(); ++k) {
          const AxisTable& t = axes_[active_[k]];
          const int64_t o = coord[active_[k]];
          if (corner >> k & 1) {
            offset += t.hi[o] - t.lo[o];
            weight *= t.w[o];
          } else {
            weight *= 1.0 - t.w[o];
          }
        }
        if (weight != 0.0) sum += weight * x[offset];
      }
      y[i] = static_cast<float>(sum);
      for (int32_t a = rank - 1; a >= 0; --a) {
        if (++coord[a] < out_.d[a]) break;
        coord[a] = 0;
      }
    }
    return Status::ok();
  }

 private:
  Dims out_;
  std::vector<AxisTable> axes_;
  std::vector<int32_t> active_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ResizeParams* p = validate<ResizeParams>(c, "resize", 1, &ops::Resize::infer, whyNot);
  if (!p || !allLinear(c, "resize", whyNot)) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT || c.outputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, "resize: the CPU kernel computes in fp32 only");
    return nullptr;
  }
  return std::make_unique<ResizeReference>(*p, c.inputs[0].dims, c.outputs[0].dims);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Resize::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
