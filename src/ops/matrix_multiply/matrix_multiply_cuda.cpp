// Matrix multiply's CUDA tactics, fastest first, kiln's reference last: cuBLAS and kiln's own
// per-element kernel (matrix_multiply_cuda.cu). Plain C++ (no CUDA kernel code).
//
// cuBLAS decisions:
// - Row-major kiln matrices are column-major transposes, so Y = op(A) op(B) is computed as
//   Y^T = op(B)^T op(A)^T: cuBLAS's first operand is B, its second A, m and n swap.
// - CUBLAS_COMPUTE_32F for FP32 and FP16 data (FP32 accumulation, never TF32: that would be
//   CUBLAS_COMPUTE_32F_FAST_TF32 or a TF32 math mode, and the context's handles keep
//   CUBLAS_DEFAULT_MATH); FP16 uses tensor cores. BF16 is left to kiln's reference.
// - Broadcasting: when each operand is either one matrix for every product (stride 0) or one
//   matrix per product (stride m*k / k*n), a single cublasGemmStridedBatchedEx does the whole
//   batch. Other broadcasts (e.g. [2,1,m,k] x [1,3,k,n]) fall back to one cublasGemmEx per
//   product, offsets computed at create().
// - No workspace: cuBLAS's own (set on the context's handle) serves.
#include <string>
#include <vector>

#include "backends/cuda/cublas_types.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/library_handles.h"
#include "ops/matrix_multiply/matrix_multiply_cuda.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"
#include "ops/op.h"

namespace kiln::cuda {

bool readMatmul(const KernelConfig& c, const char* tactic, MatmulGeometry* g, std::string* whyNot) {
  const auto* p = validateFloatLayer<MatrixMultiplyParams>(
      c, LayerType::kMATRIX_MULTIPLY, "matrix multiply", tactic, false, whyNot);
  if (!p) return false;
  const Dims& a = c.inputs[0].dims;
  const Dims& b = c.inputs[1].dims;
  const Dims& y = c.outputs[0].dims;
  g->type = c.inputs[0].type;
  g->transA = p->transposeA;
  g->transB = p->transposeB;
  g->m = y.d[y.nbDims - 2];
  g->n = y.d[y.nbDims - 1];
  g->k = p->transposeA ? a.d[a.nbDims - 2] : a.d[a.nbDims - 1];
  g->lda = a.d[a.nbDims - 1];
  g->ldb = b.d[b.nbDims - 1];
  g->batchRank = y.nbDims - 2;
  g->batchCount = 1;
  for (int32_t i = 0; i < g->batchRank; ++i) {
    g->batch[i] = y.d[i];
    g->batchCount *= y.d[i];
  }
  // Element strides of each operand along the batch axes, numpy broadcasting.
  ops::matrix_multiply::broadcastStrides(g->batchRank, a.d, a.nbDims - 2, g->m * g->k, g->aStride);
  ops::matrix_multiply::broadcastStrides(g->batchRank, b.d, b.nbDims - 2, g->k * g->n, g->bStride);
  return true;
}

namespace {

class MatmulCublas final : public Kernel {
 public:
  MatmulCublas(const MatmulGeometry& g, std::vector<int64_t> aOffsets,
               std::vector<int64_t> bOffsets, int64_t strideA, int64_t strideB, bool batched)
      : g_(g),
        aOffsets_(std::move(aOffsets)),
        bOffsets_(std::move(bOffsets)),
        strideA_(strideA),
        strideB_(strideB),
        batched_(batched) {}

  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    cublasHandle_t h = nullptr;
    KILN_RETURN_IF_ERROR(cublasHandleFor(ctx, h));
    const float one = 1.f, zero = 0.f;
    const cudaDataType_t t = cublasDataType(g_.type);
    const cublasOperation_t opB = g_.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opA = g_.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int m = static_cast<int>(g_.n), n = static_cast<int>(g_.m), k = static_cast<int>(g_.k);
    const int ldb = static_cast<int>(g_.ldb), lda = static_cast<int>(g_.lda);
    const int ldc = static_cast<int>(g_.n);
    const size_t elem = g_.type == DataType::kFLOAT ? 4 : 2;
    const auto* a = static_cast<const char*>(in[0]);
    const auto* b = static_cast<const char*>(in[1]);
    auto* y = static_cast<char*>(out[0]);
    if (batched_) {
      KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          h, opB, opA, m, n, k, &one, b, t, ldb, strideB_, a, t, lda, strideA_, &zero, y, t, ldc,
          g_.m * g_.n, static_cast<int>(g_.batchCount), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return Status::ok();
    }
    for (size_t p = 0; p < aOffsets_.size(); ++p) {
      KILN_CUBLAS_CHECK(cublasGemmEx(h, opB, opA, m, n, k, &one, b + bOffsets_[p] * elem, t, ldb,
                                     a + aOffsets_[p] * elem, t, lda, &zero,
                                     y + static_cast<int64_t>(p) * g_.m * g_.n * elem, t, ldc,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    return Status::ok();
  }

 private:
  MatmulGeometry g_;
  std::vector<int64_t> aOffsets_, bOffsets_;  // per product, elements (unbatched path only)
  int64_t strideA_, strideB_;
  bool batched_;
};

std::unique_ptr<Kernel> createCublas(const KernelConfig& c, std::string* whyNot) {
  MatmulGeometry g;
  if (!readMatmul(c, "cublas", &g, whyNot) || !cublasSupportsType(g.type, whyNot)) return nullptr;
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.batchCount}) {
    if (!fitsInt32(v)) {
      if (whyNot) *whyNot = "cublas: a matrix dimension or the batch exceeds 32-bit int";
      return nullptr;
    }
  }
  // Element offsets of A and B for each product, and whether one stride describes them.
  std::vector<int64_t> aOff(static_cast<size_t>(g.batchCount)), bOff(aOff.size());
  for (int64_t p = 0; p < g.batchCount; ++p)
    ops::matrix_multiply::batchOffsets(p, g.batchRank, g.batch, g.aStride, g.bStride,
                                       &aOff[static_cast<size_t>(p)],
                                       &bOff[static_cast<size_t>(p)]);
  auto strideOf = [&](const std::vector<int64_t>& off, int64_t matrix, int64_t* stride) {
    bool shared = true, perProduct = true;
    for (size_t p = 0; p < off.size(); ++p) {
      shared = shared && off[p] == 0;
      perProduct = perProduct && off[p] == static_cast<int64_t>(p) * matrix;
    }
    *stride = shared ? 0 : matrix;
    return shared || perProduct;
  };
  int64_t strideA = 0, strideB = 0;
  const bool batched = strideOf(aOff, g.m * g.k, &strideA) && strideOf(bOff, g.k * g.n, &strideB);
  if (batched) {
    aOff.clear();
    bOff.clear();
  }
  return std::make_unique<MatmulCublas>(g, std::move(aOff), std::move(bOff), strideA, strideB,
                                        batched);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cublas", &createCublas}, {"reference", &createMatmulReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::MatrixMultiply::cudaTactics() { return cuda::kTactics; }
