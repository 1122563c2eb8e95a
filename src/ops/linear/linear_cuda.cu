// kiln's own CUDA Linear: one output element per index, the dot product over k accumulated in
// FP32, then bias, residual and the activation (linear_semantics.h) in FP32, rounded once on
// store, for FP32/FP16/BF16. Obviously right rather than fast: it is the reference the cuBLASLt
// tactics are checked against, and runs on the host under RunContext::emulate.
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/linear/linear_cuda.h"
#include "ops/linear/linear_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct LinearOp {
  const T* x;
  const T* w;
  const T* bias;      // null when absent
  const T* residual;  // null when absent
  T* y;
  LinearGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t col = i % g.n, row = i / g.n;
    const T* xr = x + row * g.k;
    float sum = 0.f;
    for (int64_t q = 0; q < g.k; ++q)
      sum += toFloat(xr[q]) * toFloat(ops::linear::weight(w, g.p.transposeW, g.k, g.n, q, col));
    if (bias) sum += toFloat(bias[col]);
    if (residual) sum += toFloat(residual[i]);
    y[i] = fromFloat<T>(ops::linear::activate(g.p, sum));
  }
};

}  // namespace

std::unique_ptr<Kernel> createLinearReference(const KernelConfig& c, std::string* whyNot) {
  LinearGeometry g;
  if (!readLinear(c, "reference", &g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const ops::linear::InputSlots s(g.p);
        LinearOp<T> f{static_cast<const T*>(in[0]),
                      static_cast<const T*>(in[1]),
                      s.bias >= 0 ? static_cast<const T*>(in[s.bias]) : nullptr,
                      s.residual >= 0 ? static_cast<const T*>(in[s.residual]) : nullptr,
                      static_cast<T*>(out[0]),
                      g};
        return launchElements(f, g.rows * g.n, ctx, "linear_ref");
      });
}

}  // namespace kiln::cuda
