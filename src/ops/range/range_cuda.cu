// Range on CUDA, one tactic: "reference", a per-element kernel over range_semantics.h (the rule
// the CPU kernel uses). The dims source is never read.
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/range/range_semantics.h"

namespace kiln::cuda {
namespace {

template <class T>
struct RangeOp {
  T* y;
  double start, delta;
  __host__ __device__ void operator()(int64_t i) const {
    y[i] = static_cast<T>(ops::range::value(start, delta, i));
  }
};

class RangeKernel final : public Kernel {
 public:
  RangeKernel(const RangeParams& p, int64_t count) : p_(p), count_(count) {}
  Status run(const void* const*, void* const* out, void*, const RunContext& ctx) const override {
    switch (p_.type) {
      case DataType::kFLOAT:
        return launch(static_cast<float*>(out[0]), ctx);
      case DataType::kINT32:
        return launch(static_cast<int32_t*>(out[0]), ctx);
      default:
        return launch(static_cast<int64_t*>(out[0]), ctx);
    }
  }

 private:
  template <class T>
  Status launch(T* y, const RunContext& ctx) const {
    return launchElements(RangeOp<T>{y, p_.start, p_.delta}, count_, ctx, "range");
  }

  RangeParams p_;
  int64_t count_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const RangeParams* p = validate<RangeParams>(c, "range", -1, true, whyNot);
  if (!p) return nullptr;
  return std::make_unique<RangeKernel>(*p, c.outputs[0].dims.d[0]);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Range::cudaTactics() { return cuda::kTactics; }
