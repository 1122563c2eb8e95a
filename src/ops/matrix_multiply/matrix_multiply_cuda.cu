// kiln's own CUDA matrix multiply: one output element per index, looping over k with FP32
// accumulation, for FP32/FP16/BF16. Obviously right rather than fast: it is the reference the
// cuBLAS tactic is checked against, and runs on the host under RunContext::emulate. op(A), op(B)
// and the batch broadcasting are the CPU's (matrix_multiply_semantics.h).
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/matrix_multiply/matrix_multiply_cuda.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct MatmulOp {
  const T* a;
  const T* b;
  T* y;
  MatmulGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    namespace mm = ops::matrix_multiply;
    const int64_t col = i % g.n;
    int64_t t = i / g.n;
    const int64_t row = t % g.m;
    t /= g.m;
    int64_t aOff, bOff;
    mm::batchOffsets(t, g.batchRank, g.batch, g.aStride, g.bStride, &aOff, &bOff);
    const T* am = a + aOff;
    const T* bm = b + bOff;
    float sum = 0.f;
    for (int64_t p = 0; p < g.k; ++p) {
      const float av = toFloat(mm::elementA(am, g.transA, g.lda, row, p));
      const float bv = toFloat(mm::elementB(bm, g.transB, g.ldb, p, col));
      sum += av * bv;
    }
    y[i] = fromFloat<T>(sum);
  }
};

}  // namespace

std::unique_ptr<Kernel> createMatmulReference(const KernelConfig& c, std::string* whyNot) {
  MatmulGeometry g;
  if (!readMatmul(c, "reference", &g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        return launchElements(MatmulOp<T>{static_cast<const T*>(in[0]),
                                          static_cast<const T*>(in[1]), static_cast<T*>(out[0]), g},
                              g.batchCount * g.m * g.n, ctx, "dense_matmul_ref");
      });
}

}  // namespace kiln::cuda
