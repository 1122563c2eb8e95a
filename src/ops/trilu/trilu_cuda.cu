// Trilu on CUDA, one tactic: "reference", for every data type (one kernel per element size),
// linear tensors only. Which elements it keeps is trilu_semantics.h, shared with the CPU kernel.
#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/trilu/trilu_semantics.h"

namespace kiln::cuda {
namespace {

template <class T>
struct TriluOp {
  const T* x;
  T* y;
  int64_t rows, cols, k;
  bool upper;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t col = i % cols;
    const int64_t row = (i / cols) % rows;
    y[i] = ops::trilu::keeps(upper, k, row, col) ? x[i] : T{0};
  }
};

class TriluKernel final : public Kernel {
 public:
  TriluKernel(const TriluParams& p, int64_t count, int64_t rows, int64_t cols, size_t elemSize)
      : p_(p), count_(count), rows_(rows), cols_(cols), elemSize_(elemSize) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return bySize(elemSize_, [&](auto u) {
      using U = decltype(u);
      return launchElements(TriluOp<U>{static_cast<const U*>(in[0]), static_cast<U*>(out[0]), rows_,
                                       cols_, p_.k, p_.upper},
                            count_, ctx, "trilu");
    });
  }

 private:
  TriluParams p_;
  int64_t count_, rows_, cols_;
  size_t elemSize_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const TriluParams* p = validate<TriluParams>(c, "trilu", 1, true, whyNot);
  if (!p) return nullptr;
  const Dims& d = c.inputs[0].dims;
  return std::make_unique<TriluKernel>(*p, volume(d), d.d[d.nbDims - 2], d.d[d.nbDims - 1],
                                       dataTypeSize(c.inputs[0].type));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Trilu::cudaTactics() { return cuda::kTactics; }
