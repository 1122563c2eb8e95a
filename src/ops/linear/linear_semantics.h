// The rules Linear's shape rule (linear_shape.cpp), CPU kernels (linear_cpu.cpp) and CUDA kernels
// (linear_cuda.*) share: where each input sits, the element W(k, j) of the weights as stored, and
// the epilogue of one output element. Each backend keeps its own accumulation of the product.
// Plain types, host and device (core/host_device.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kiln/ops/linear.h"
#include "ops/activation/activation_semantics.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"

namespace kiln::ops::linear {

// The input index of each optional input (-1 when absent) and how many inputs the layer has:
// X, W, then bias if hasBias, then residual if hasResidual.
struct InputSlots {
  int32_t bias = -1;
  int32_t residual = -1;
  int32_t count = 2;
  KILN_HOST_DEVICE explicit InputSlots(const LinearParams& p) {
    if (p.hasBias) bias = count++;
    if (p.hasResidual) residual = count++;
  }
};

// W(p, col) of the [k, n] product operand, W stored row-major as [k, n], or as [n, k] when
// transposed (matrix multiply's op(B), with ldb the stored row length).
template <typename T>
KILN_HOST_DEVICE inline T weight(const T* w, bool transposeW, int64_t k, int64_t n, int64_t p,
                                 int64_t col) {
  return matrix_multiply::elementB(w, transposeW, transposeW ? k : n, p, col);
}

// The layer's activation (the Activation op's function, activation_semantics.h), or v itself
// when it has none.
KILN_HOST_DEVICE inline float activate(const LinearParams& p, float v) {
  return activation::fusedActivation(p, v);
}

}  // namespace kiln::ops::linear
