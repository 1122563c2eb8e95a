// The rules gemm's CPU kernels (gemm_cpu.cpp) and CUDA kernels (gemm_cuda.cu, .cpp) share: how C
// aligns right to Y [m, n] and broadcasts (ONNX's unidirectional broadcast), and op(A), op(B),
// which are matrix multiply's (matrix_multiply_semantics.h). Index rules only: each backend keeps
// its own accumulation. Plain types, host and device (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"

namespace kiln::ops::gemm {

using matrix_multiply::elementA;
using matrix_multiply::elementB;

// C's extent [rows, cols] once aligned right to [m, n], from its dims (rank 0, 1 or 2).
KILN_HOST_DEVICE inline void cExtent(int32_t nbDims, const int64_t* dims, int64_t* rows,
                                     int64_t* cols) {
  *rows = nbDims == 2 ? dims[0] : 1;
  *cols = nbDims >= 1 ? dims[nbDims - 1] : 1;
}

// The element of C that Y[row][col] adds: an extent of 1 serves every row (or column).
KILN_HOST_DEVICE inline int64_t cIndex(int64_t row, int64_t col, int64_t cRows, int64_t cCols) {
  return (cRows == 1 ? 0 : row) * cCols + (cCols == 1 ? 0 : col);
}

}  // namespace kiln::ops::gemm
