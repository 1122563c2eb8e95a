// Shape on CUDA, one tactic: "reference". The dims are known when the kernel is made (kernels are
// made per shape), so it writes them from its arguments: one small launch, which a CUDA graph
// captures like any other. The input is never read.
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/shape/shape_semantics.h"

namespace kiln::cuda {
namespace {

struct WriteDims {
  int64_t* y;
  Dims values;
  __host__ __device__ void operator()(int64_t i) const { y[i] = values.d[i]; }
};

class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(Dims values) : values_(values) {}
  Status run(const void* const*, void* const* out, void*, const RunContext& ctx) const override {
    return launchElements(WriteDims{static_cast<int64_t*>(out[0]), values_}, values_.nbDims, ctx,
                          "shape");
  }

 private:
  Dims values_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ShapeParams* p = validate<ShapeParams>(c, "shape", 1, false, whyNot);
  if (!p) return nullptr;
  return std::make_unique<ShapeKernel>(ops::shape_of::valuesOf(*p, c.inputs[0].dims));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Shape::cudaTactics() { return cuda::kTactics; }
