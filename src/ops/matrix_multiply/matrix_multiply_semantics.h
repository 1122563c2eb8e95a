// The rules matrix multiply's CPU kernels (matrix_multiply_cpu.cpp) and CUDA kernels
// (matrix_multiply_cuda.cu, .cpp) share: the elements of op(A) and op(B) for row-major operands,
// and numpy's broadcasting of the batch axes (aligned right; an axis of 1, or a missing one,
// serves every index). Gemm's products follow the same op(A), op(B) (gemm_semantics.h). Index
// rules only: each backend keeps its own accumulation. Plain types, host and device
// (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::matrix_multiply {

// op(A)[row][p] of A stored row-major with `lda` elements a row: A[row][p], or A[p][row] when
// transposed.
template <typename T>
KILN_HOST_DEVICE inline T elementA(const T* a, bool transA, int64_t lda, int64_t row, int64_t p) {
  return transA ? a[p * lda + row] : a[row * lda + p];
}

// op(B)[p][col] of B stored row-major with `ldb` elements a row: B[p][col], or B[col][p] when
// transposed.
template <typename T>
KILN_HOST_DEVICE inline T elementB(const T* b, bool transB, int64_t ldb, int64_t p, int64_t col) {
  return transB ? b[col * ldb + p] : b[p * ldb + col];
}

// Per batch axis of the output (`rank` of them), the stride of operand x along it: x's `xRank`
// batch dims `xBatch` align right with the output's, and an axis where x has 1 (or no axis)
// broadcasts, stride 0. `unit` is the stride of x's innermost batch axis: 1 to count x's
// matrices, rows * cols to count its elements.
KILN_HOST_DEVICE inline void broadcastStrides(int32_t rank, const int64_t* xBatch, int32_t xRank,
                                              int64_t unit, int64_t* strides) {
  for (int32_t i = rank - 1; i >= 0; --i) {
    const int32_t xi = i - (rank - xRank);
    const int64_t d = xi >= 0 ? xBatch[xi] : 1;
    strides[i] = d == 1 ? 0 : unit;
    unit *= d;
  }
}

// Where product `t` of the output (its batch index, row-major over the `rank` dims `batch`) finds
// A and B: the sums of its coordinates times each operand's broadcastStrides.
KILN_HOST_DEVICE inline void batchOffsets(int64_t t, int32_t rank, const int64_t* batch,
                                          const int64_t* aStrides, const int64_t* bStrides,
                                          int64_t* aOffset, int64_t* bOffset) {
  int64_t a = 0, b = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    const int64_t coord = t % batch[d];
    t /= batch[d];
    a += coord * aStrides[d];
    b += coord * bStrides[d];
  }
  *aOffset = a;
  *bOffset = b;
}

}  // namespace kiln::ops::matrix_multiply
