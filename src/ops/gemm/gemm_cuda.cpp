// Gemm's CUDA tactics, fastest first, kiln's reference last: cuBLAS and kiln's own per-element
// kernel (gemm_cuda.cu). Plain C++ (no kernel code).
//
// cuBLAS decisions (as matrix multiply's, matrix_multiply_cuda.cpp: Y^T = op(B)^T op(A)^T,
// CUBLAS_COMPUTE_32F, never TF32, BF16 left to the reference, no workspace):
// - A small kernel writes beta * C (broadcast) into Y first and cublasGemmEx adds
//   alpha op(A) op(B) with beta 1, which keeps ONNX's semantics exactly (also for beta 0 with
//   non-finite C, as the CPU reference); without C, beta 0.
#include <string>

#include "backends/cuda/cublas_types.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/library_handles.h"
#include "ops/gemm/gemm_cuda.h"
#include "ops/gemm/gemm_semantics.h"
#include "ops/op.h"

namespace kiln::cuda {

bool readGemm(const KernelConfig& c, const char* tactic, GemmGeometry* g, std::string* whyNot) {
  const auto* p =
      validateFloatLayer<GemmParams>(c, LayerType::kGEMM, "gemm", tactic, false, whyNot);
  if (!p) return false;
  const Dims& a = c.inputs[0].dims;
  const Dims& b = c.inputs[1].dims;
  g->type = c.inputs[0].type;
  g->transA = p->transposeA;
  g->transB = p->transposeB;
  g->m = c.outputs[0].dims.d[0];
  g->n = c.outputs[0].dims.d[1];
  g->k = p->transposeA ? a.d[0] : a.d[1];
  g->lda = a.d[1];
  g->ldb = b.d[1];
  g->alpha = p->alpha;
  g->beta = p->beta;
  g->hasC = c.inputs.size() == 3;
  if (g->hasC) {
    const Dims& cd = c.inputs[2].dims;
    ops::gemm::cExtent(cd.nbDims, cd.d, &g->cRows, &g->cCols);
  }
  return true;
}

namespace {

class GemmCublas final : public Kernel {
 public:
  explicit GemmCublas(const GemmGeometry& g) : g_(g) {}

  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    cublasHandle_t h = nullptr;
    KILN_RETURN_IF_ERROR(cublasHandleFor(ctx, h));
    if (g_.hasC) KILN_RETURN_IF_ERROR(fillScaledC(out[0], in[2], g_, ctx));
    const float alpha = g_.alpha, beta = g_.hasC ? 1.f : 0.f;
    const cudaDataType_t t = cublasDataType(g_.type);
    KILN_CUBLAS_CHECK(cublasGemmEx(
        h, g_.transB ? CUBLAS_OP_T : CUBLAS_OP_N, g_.transA ? CUBLAS_OP_T : CUBLAS_OP_N,
        static_cast<int>(g_.n), static_cast<int>(g_.m), static_cast<int>(g_.k), &alpha, in[1], t,
        static_cast<int>(g_.ldb), in[0], t, static_cast<int>(g_.lda), &beta, out[0], t,
        static_cast<int>(g_.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

 private:
  GemmGeometry g_;
};

std::unique_ptr<Kernel> createCublas(const KernelConfig& c, std::string* whyNot) {
  GemmGeometry g;
  if (!readGemm(c, "cublas", &g, whyNot) || !cublasSupportsType(g.type, whyNot)) return nullptr;
  for (int64_t v : {g.m, g.n, g.k, g.lda, g.ldb}) {
    if (!fitsInt32(v)) {
      if (whyNot) *whyNot = "cublas: a matrix dimension exceeds 32-bit int";
      return nullptr;
    }
  }
  return std::make_unique<GemmCublas>(g);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cublas", &createCublas}, {"reference", &createGemmReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Gemm::cudaTactics() { return cuda::kTactics; }
