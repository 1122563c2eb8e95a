// kiln's own single-precision GEMM: C = alpha * op(A) * op(B) + beta * C, with op(A) [m,k],
// op(B) [k,n] and C [m,n] row-major. Cache-blocked (BLIS loop order), operands packed into
// micro-panels, a register-blocked micro-kernel in plain C++ that the compiler vectorizes.
//
// The micro-kernel exists in several versions (baseline, AVX2, AVX-512 on x86-64), one chosen per
// process from the CPU; set KILN_SGEMM=baseline or avx2 to force a lesser one.
//
// Multi-threaded on the CPU backend's pool (thread_pool.h: KILN_CPU_THREADS) once a product is
// large enough, each thread taking whole rectangles of C with its own packing scratch; smaller
// products run on the caller. Deterministic: for given shapes, each output element is
// accumulated in a fixed order whatever the thread count, so the same inputs give bit-identical
// outputs on every call and for 1 or N threads (on one machine). All scratch lives in the
// caller's workspace, so concurrent calls are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::cpu {

// A row-major matrix in memory: op(X)(r, c) is data[r * ld + c], or data[c * ld + r] when trans.
struct MatrixRef {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
};

// An operand packed once ahead of time (constant weights), in exactly the layout sgemm() packs
// into its workspace, so the per-call packing of that operand disappears. The layout depends on
// the micro-kernel version: pack in the process that runs it (never serialize it).
class PackedMatrix {
 public:
  PackedMatrix() = default;
  // op(A) of shape [m, k], for use as the left operand.
  static PackedMatrix packA(int64_t m, int64_t k, MatrixRef a);
  // op(B) of shape [k, n], for use as the right operand.
  static PackedMatrix packB(int64_t k, int64_t n, MatrixRef b);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  bool isA() const { return isA_; }
  const float* data() const { return data_.data(); }

 private:
  PackedMatrix(int64_t rows, int64_t cols, bool isA, std::vector<float> data)
      : data_(std::move(data)), rows_(rows), cols_(cols), isA_(isA) {}

  std::vector<float> data_;
  int64_t rows_ = 0, cols_ = 0;
  bool isA_ = true;
};

// One operand of sgemm(): packed when `packed` is non-null (then `raw` is ignored).
struct GemmOperand {
  MatrixRef raw;
  const PackedMatrix* packed = nullptr;
};

// The micro-kernel version in use: "baseline", "avx2" or "avx512".
const char* sgemmVariantName();

// Workspace bytes sgemm() needs for these sizes (an upper bound, including alignment slack): one
// packing scratch per thread that would share the product, for the process's thread count. It
// also covers any smaller m, n or k.
size_t sgemmWorkspaceSize(int64_t m, int64_t n, int64_t k);

// The threads sgemm() splits this product over when called from this thread (1: it runs on the
// caller). For tests and benchmarks; results do not depend on it.
int sgemmThreads(int64_t m, int64_t n, int64_t k);

// C = alpha * op(A) op(B) + beta * C. With beta == 0, C is not read (BLAS convention).
// A packed operand must have been packed with the same m/k (A) or k/n (B).
void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b,
           float beta, float* c, int64_t ldc, void* workspace);

}  // namespace kiln::cpu
