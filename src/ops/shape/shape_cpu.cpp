// Shape on the CPU, one tactic: "reference". The dims are known when the kernel is made (kernels
// are made per shape), so running it writes them; the input is never read.
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/shape/shape_semantics.h"

namespace kiln::cpu {
namespace {

class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(Dims values) : values_(values) {}
  Status run(const void* const*, void* const* out, void*) const override {
    auto* y = static_cast<int64_t*>(out[0]);
    for (int32_t k = 0; k < values_.nbDims; ++k) y[k] = values_.d[k];
    return Status::ok();
  }

 private:
  Dims values_;  // the output's values, as many as its one dim
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ShapeParams* p = validate<ShapeParams>(c, "shape", 1, &ops::Shape::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<ShapeKernel>(ops::shape_of::valuesOf(*p, c.inputs[0].dims));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Shape::cpuTactics() { return cpu::kTactics; }
