// Gather on the CPU (ONNX Gather). One tactic: "reference". It moves bytes, so it serves every
// data type: for each block of the dims before the axis and each index, one contiguous run of the
// dims after the axis is copied. Every index is checked before anything is written, so a bad
// index (gather_semantics.h, shared with the CUDA kernel) fails run() with the output untouched
// and nothing is read out of bounds.
#include <cstring>

#include "backends/cpu/tactic_checks.h"
#include "ops/gather/gather_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

class GatherKernel final : public Kernel {
 public:
  GatherKernel(bool wide, int64_t outer, int64_t axisDim, int64_t nbIndices, int64_t innerBytes)
      : wide_(wide),
        outer_(outer),
        axisDim_(axisDim),
        nbIndices_(nbIndices),
        innerBytes_(innerBytes) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    // Both passes read the indices through the same accessor so they cannot disagree.
    auto raw = [&](int64_t k) -> int64_t {
      return wide_ ? static_cast<const int64_t*>(in[1])[k] : static_cast<const int32_t*>(in[1])[k];
    };
    auto index = [&](int64_t k) { return ops::gather::position(raw(k), axisDim_); };
    for (int64_t k = 0; k < nbIndices_; ++k) {
      if (!ops::gather::inRange(index(k), axisDim_)) {
        return invalidArgument("gather: index " + std::to_string(raw(k)) + " at position " +
                               std::to_string(k) + " is outside [" + std::to_string(-axisDim_) +
                               ", " + std::to_string(axisDim_) + ")");
      }
    }
    if (innerBytes_ == 0) return Status::ok();
    const auto* src = static_cast<const uint8_t*>(in[0]);
    auto* dst = static_cast<uint8_t*>(out[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      const uint8_t* block = src + o * axisDim_ * innerBytes_;
      for (int64_t k = 0; k < nbIndices_; ++k) {
        std::memcpy(dst, block + index(k) * innerBytes_, static_cast<size_t>(innerBytes_));
        dst += innerBytes_;
      }
    }
    return Status::ok();
  }

 private:
  bool wide_;  // int64 indices
  int64_t outer_, axisDim_, nbIndices_, innerBytes_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const GatherParams* p = validate<GatherParams>(c, "gather", 2, &ops::Gather::infer, whyNot);
  if (!p || !allLinear(c, "gather", whyNot)) return nullptr;
  const ops::gather::Split s = ops::gather::split(c.inputs[0].dims, p->axis);
  const int64_t innerBytes = s.inner * static_cast<int64_t>(dataTypeSize(c.inputs[0].type));
  return std::make_unique<GatherKernel>(c.inputs[1].type == DataType::kINT64, s.outer, s.axisDim,
                                        volume(c.inputs[1].dims), innerBytes);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Gather::cpuTactics() { return cpu::kTactics; }
