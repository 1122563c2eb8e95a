// Select (ONNX Where) on the CPU: out = condition ? x : y with numpy broadcasting of all three.
// One tactic: "reference", for any element type: it copies bytes, so fp16 or int8 values pass
// through unchanged. Any non-zero condition byte counts as true. The broadcasting is
// select_semantics.h, shared with the CUDA kernel.
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/select/select_semantics.h"

namespace kiln::cpu {
namespace {

class SelectKernel final : public Kernel {
 public:
  SelectKernel(const Dims& c, const Dims& x, const Dims& y, const Dims& out, size_t elemSize)
      : out_(out), elemSize_(elemSize) {
    ops::select::broadcastStrides(c, out.nbDims, strides_[0]);
    ops::select::broadcastStrides(x, out.nbDims, strides_[1]);
    ops::select::broadcastStrides(y, out.nbDims, strides_[2]);
  }

  Status run(const void* const* in, void* const* out, void*) const override {
    const int64_t vol = volume(out_);
    if (vol == 0) return Status::ok();
    const auto* cond = static_cast<const uint8_t*>(in[0]);
    const auto* x = static_cast<const uint8_t*>(in[1]);
    const auto* y = static_cast<const uint8_t*>(in[2]);
    auto* o = static_cast<uint8_t*>(out[0]);
    const int32_t r = out_.nbDims;
    // Offsets in elements of each input, advanced like an odometer over the output's dims.
    int64_t coord[Dims::kMaxDims] = {};
    int64_t off[3] = {0, 0, 0};
    for (int64_t i = 0; i < vol; ++i) {
      const uint8_t* src = cond[off[0]] != 0 ? x + off[1] * elemSize_ : y + off[2] * elemSize_;
      std::memcpy(o + i * elemSize_, src, elemSize_);
      for (int32_t k = r - 1; k >= 0; --k) {
        for (int t = 0; t < 3; ++t) off[t] += strides_[t][k];
        if (++coord[k] < out_.d[k]) break;
        for (int t = 0; t < 3; ++t) off[t] -= strides_[t][k] * out_.d[k];
        coord[k] = 0;
      }
    }
    return Status::ok();
  }

 private:
  Dims out_;
  size_t elemSize_;
  int64_t strides_[3][Dims::kMaxDims] = {};
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const SelectParams* p = validate<SelectParams>(c, "select", 3, &ops::Select::infer, whyNot);
  if (!p || !allLinear(c, "select", whyNot)) return nullptr;
  return std::make_unique<SelectKernel>(c.inputs[0].dims, c.inputs[1].dims, c.inputs[2].dims,
                                        c.outputs[0].dims, dataTypeSize(c.outputs[0].type));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Select::cpuTactics() { return cpu::kTactics; }
