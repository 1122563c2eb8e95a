// What gemm's two CUDA files share: the geometry, the validation (gemm_cuda.cpp, which also holds
// the cuBLAS tactic and the tactic list), kiln's own reference kernel and the beta * C kernel the
// cuBLAS tactic starts with (gemm_cuda.cu). Plain C++ (no CUDA header): the geometry is trivially
// copyable, so the element functors carry it to the device by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// Gemm: y [m, n] = alpha op(A) op(B) + beta C, C [cRows, cCols] aligned right to [m, n] (see
// gemm_semantics.h).
struct GemmGeometry {
  DataType type = DataType::kFLOAT;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0;
  float alpha = 1.f, beta = 1.f;
  bool hasC = false;
  int64_t cRows = 1, cCols = 1;
};

// True with *g filled when the configuration is one gemm's CUDA tactics can run (see
// backends/cuda/float_layer_checks.h), else false with *whyNot prefixed by `tactic`.
bool readGemm(const KernelConfig& c, const char* tactic, GemmGeometry* g, std::string* whyNot);

// kiln's reference: one output element per index, every float type.
std::unique_ptr<Kernel> createGemmReference(const KernelConfig& c, std::string* whyNot);

// y [m, n] = beta * C broadcast, enqueued on ctx.stream (the cuBLAS tactic then accumulates
// alpha op(A) op(B) with beta 1).
Status fillScaledC(void* y, const void* cData, const GemmGeometry& g, const RunContext& ctx);

}  // namespace kiln::cuda
