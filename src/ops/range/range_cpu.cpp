// Range on the CPU, one tactic: "reference" (range_semantics.h gives element i, shared with the
// CUDA kernel). The dims source is never read.
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/range/range_semantics.h"

namespace kiln::cpu {
namespace {

class RangeKernel final : public Kernel {
 public:
  RangeKernel(const RangeParams& p, int64_t count) : p_(p), count_(count) {}

  Status run(const void* const*, void* const* out, void*) const override {
    switch (p_.type) {
      case DataType::kFLOAT:
        return fill(static_cast<float*>(out[0]));
      case DataType::kINT32:
        return fill(static_cast<int32_t*>(out[0]));
      default:
        return fill(static_cast<int64_t*>(out[0]));
    }
  }

 private:
  template <class T>
  Status fill(T* y) const {
    for (int64_t i = 0; i < count_; ++i)
      y[i] = static_cast<T>(ops::range::value(p_.start, p_.delta, i));
    return Status::ok();
  }

  RangeParams p_;
  int64_t count_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const RangeParams* p = validate<RangeParams>(c, "range", -1, &ops::Range::infer, whyNot);
  if (!p || !allLinear(c, "range", whyNot)) return nullptr;
  return std::make_unique<RangeKernel>(*p, c.outputs[0].dims.d[0]);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Range::cpuTactics() { return cpu::kTactics; }
