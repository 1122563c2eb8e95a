// CPU resize (ONNX Resize, opsets 11-17, nearest and linear): per axis, a table maps each output
// index to its input neighbours once at kernel creation (by resize_semantics.h, shared with the
// CUDA kernel); run() then only gathers. fp32 linear.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/resize/resize_semantics.h"

namespace kiln::cpu {
namespace {

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
        const ops::resize::Tap tap =
            ops::resize::tap(p.mode, p.coordinates, p.rounding, o, len, n, p.scales[a]);
        t.lo.push_back(tap.lo * strides[a]);
        t.hi.push_back(tap.hi * strides[a]);
        t.w.push_back(tap.w);
        if (tap.w != 0.0) t.interpolates = true;
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

std::span<const kiln::Tactic> kiln::ops::Resize::cpuTactics() { return cpu::kTactics; }
