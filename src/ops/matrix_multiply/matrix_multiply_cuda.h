// What matrix multiply's two CUDA files share: the geometry, the validation
// (matrix_multiply_cuda.cpp, which also holds the cuBLAS tactic and the tactic list) and kiln's
// own reference kernel (matrix_multiply_cuda.cu). Plain C++ (no CUDA header): the geometry is
// trivially copyable, so the element functor carries it to the device by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// Matrix multiply, numpy rules: y [batch..., m, n] = op(A) op(B); per output batch axis the
// element strides of A and B (0 where that operand broadcasts along it; see
// matrix_multiply_semantics.h).
struct MatmulGeometry {
  DataType type = DataType::kFLOAT;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0;  // last dim of A and of B as stored
  int32_t batchRank = 0;
  int64_t batch[Dims::kMaxDims] = {};
  int64_t aStride[Dims::kMaxDims] = {};
  int64_t bStride[Dims::kMaxDims] = {};
  int64_t batchCount = 1;
};

// True with *g filled when the configuration is one matrix multiply's CUDA tactics can run (see
// backends/cuda/float_layer_checks.h), else false with *whyNot prefixed by `tactic`.
bool readMatmul(const KernelConfig& c, const char* tactic, MatmulGeometry* g, std::string* whyNot);

// kiln's reference: one output element per index, every float type.
std::unique_ptr<Kernel> createMatmulReference(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda
