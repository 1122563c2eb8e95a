// Concatenation on the CPU. One tactic: "reference". It moves bytes, so it serves every data type:
// seen as [outer, axis_i * inner], each input contributes one contiguous block per outer index.
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(int64_t outer, std::vector<int64_t> blockBytes)
      : outer_(outer), blockBytes_(std::move(blockBytes)) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    auto* o = static_cast<uint8_t*>(out[0]);
    for (int64_t r = 0; r < outer_; ++r) {
      for (size_t i = 0; i < blockBytes_.size(); ++i) {
        const int64_t n = blockBytes_[i];
        if (n == 0) continue;
        std::memcpy(o, static_cast<const uint8_t*>(in[i]) + r * n, static_cast<size_t>(n));
        o += n;
      }
    }
    return Status::ok();
  }

 private:
  int64_t outer_;
  std::vector<int64_t> blockBytes_;  // per input: bytes of one block
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ConcatenationParams* p =
      validate<ConcatenationParams>(c, "concatenation", -1, &ops::Concatenation::infer, whyNot);
  if (!p || !allLinear(c, "concatenation", whyNot)) return nullptr;
  const Dims& d = c.outputs[0].dims;
  const int32_t axis = p->axis < 0 ? p->axis + d.nbDims : p->axis;  // validated by inference
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) inner *= d.d[i];
  const int64_t elem = static_cast<int64_t>(dataTypeSize(c.outputs[0].type));
  std::vector<int64_t> blocks;
  for (const auto& x : c.inputs) blocks.push_back(x.dims.d[axis] * inner * elem);
  if (outer == 0) blocks.assign(blocks.size(), 0);
  return std::make_unique<ConcatKernel>(outer, std::move(blocks));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Concatenation::cpuTactics() { return cpu::kTactics; }
