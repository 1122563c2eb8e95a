// Hopper/Ampere tensor-core building blocks for kiln's own kernels, as PTX wraps: the mma.sync
// tile product, ldmatrix, and cp.async copies into shared memory, apart from the kernels that use
// them (the fused attention, ops/attention/attention_cuda.cu). Device code only: a kernel that uses
// them has no host emulation.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace kiln::cuda {

// Two storage-type values packed into the 32-bit register an mma operand takes (the first in
// the low half).
template <class T>
__device__ inline uint32_t packPair(float a, float b) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

// c += a b for one m16n8k16 tile (PTX ISA "mma.m16n8k16": a is 16x16 row-major in 4 registers,
// b 16x8 column-major in 2, c 16x8 FP32 in 4).
template <class T>
__device__ inline void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Four 8x8 matrices of 16-bit elements from shared memory (PTX ISA "ldmatrix"): lane l gives the
// address of row l % 8 of matrix l / 8, and receives r[i] = row l / 4, elements 2 (l % 4) and
// 2 (l % 4) + 1 of matrix i; with `.trans` the same of each matrix transposed.
__device__ inline void loadMatrices(uint32_t (&r)[4], const void* rowAddress) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(rowAddress));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
__device__ inline void loadMatricesTransposed(uint32_t (&r)[4], const void* rowAddress) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(rowAddress));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

// 16 bytes from global to shared memory without the registers (cp.async); `valid` false writes
// 16 zero bytes and reads nothing (a source size of 0).
__device__ inline void copy16Async(void* shared, const void* global, bool valid) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
  const int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(global), "r"(bytes));
}
__device__ inline void commitAsync() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ inline void waitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
}

}  // namespace kiln::cuda
