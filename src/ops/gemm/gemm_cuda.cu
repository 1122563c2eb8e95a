// kiln's own CUDA gemm: one output element per index, looping over k with FP32 accumulation, for
// FP32/FP16/BF16. Obviously right rather than fast: it is the reference the cuBLAS tactic is
// checked against, and runs on the host under RunContext::emulate. Also the small kernel that
// writes beta * C before the cuBLAS call. op(A), op(B) and C's broadcast are the CPU's
// (gemm_semantics.h).
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/gemm/gemm_cuda.h"
#include "ops/gemm/gemm_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
__host__ __device__ inline float cAt(const T* c, const GemmGeometry& g, int64_t row, int64_t col) {
  return toFloat(c[ops::gemm::cIndex(row, col, g.cRows, g.cCols)]);
}

template <typename T>
struct GemmOp {
  const T* a;
  const T* b;
  const T* c;
  T* y;
  GemmGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t col = i % g.n, row = i / g.n;
    float sum = 0.f;
    for (int64_t p = 0; p < g.k; ++p) {
      const float av = toFloat(ops::gemm::elementA(a, g.transA, g.lda, row, p));
      const float bv = toFloat(ops::gemm::elementB(b, g.transB, g.ldb, p, col));
      sum += av * bv;
    }
    float v = g.alpha * sum;
    if (c) v += g.beta * cAt(c, g, row, col);
    y[i] = fromFloat<T>(v);
  }
};

template <typename T>
struct ScaledCOp {
  const T* c;
  T* y;
  GemmGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    y[i] = fromFloat<T>(g.beta * cAt(c, g, i / g.n, i % g.n));
  }
};

}  // namespace

std::unique_ptr<Kernel> createGemmReference(const KernelConfig& c, std::string* whyNot) {
  GemmGeometry g;
  if (!readGemm(c, "reference", &g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const T* cData = g.hasC ? static_cast<const T*>(in[2]) : nullptr;
        return launchElements(GemmOp<T>{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                        cData, static_cast<T*>(out[0]), g},
                              g.m * g.n, ctx, "dense_gemm_ref");
      });
}

Status fillScaledC(void* y, const void* cData, const GemmGeometry& g, const RunContext& ctx) {
  return launchTyped<FloatTypes>(g.type, [&](auto tag) {
    using T = decltype(tag);
    return launchElements(ScaledCOp<T>{static_cast<const T*>(cData), static_cast<T*>(y), g},
                          g.m * g.n, ctx, "dense_gemm_c");
  });
}

}  // namespace kiln::cuda
