// Linear on Hopper's warpgroup tensor cores, with kiln's epilogue in registers (see
// linear_wgmma.h). Compiled for sm_90a only (wgmma is not in plain sm_90), in a library of its own
// (CMakeLists.txt).
//
// One thread block computes a tile of 128 rows of Y by BN columns (BN = 128 or 256):
// - Thread 0 is the producer: it asks the tensor memory accelerator (TMA,
//   cp.async.bulk.tensor) for the next K-slices of X (128 rows x 64) and W (BN x 64), S stages
//   ahead, each stage's arrival counted on a "full" mbarrier by its bytes. TMA writes both tiles
//   with the 128-byte swizzle that wgmma reads without bank conflicts, and zero-fills whatever lies
//   outside the matrices (the last rows, columns and K-slice), so the main loop has no bounds.
// - Two warpgroups (128 threads each) are the consumers: warpgroup g multiplies rows 64g..64g+63
//   of the tile by all BN columns, four m64nBNk16 wgmma per K-slice, accumulating in FP32
//   registers (BN / 2 per thread). One wgmma group stays in flight: once slice kt-1's group has
//   completed, every thread arrives on that stage's "empty" mbarrier and the producer refills it.
// - The epilogue runs on the accumulators where they lie: + bias + residual, the activation
//   (activation_semantics.h; the erf GELU of an FP16/BF16 result is geluForHalfResult, as the
//   Activation op's kernels compute it), rounded once to the storage type and stored as element
//   pairs. So Y is written once, where cuBLASLt without an epilogue for the activation writes it,
//   reads it and writes it again.
//
// W is either [n, k] (transposeW: K-major, as wgmma's B wants it by default) or [k, n] (N-major:
// TMA loads 64-column boxes of it, and wgmma reads B transposed).
//
// BN = 128 takes 3 stages (96 KiB of shared memory) so that two blocks share a multiprocessor and
// one's epilogue overlaps the other's products; BN = 256 takes 4 stages (192 KiB), one block per
// multiprocessor with twice the accumulators. The builder times both against cuBLASLt.
#include "ops/linear/linear_wgmma.h"

#include <cuda.h>  // CUtensorMap and its enums only: the encoder comes through the runtime
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"
#include "ops/activation/activation_semantics.h"
#include "ops/linear/linear_cuda.h"
#include "ops/linear/linear_semantics.h"

namespace kiln::cuda {
namespace {

constexpr int kBlockM = 128;  // two consumer warpgroups of 64 rows
constexpr int kBlockK = 64;   // one 128-byte swizzle row of 16-bit elements
constexpr int kThreads = 256;
constexpr uint32_t kRowBytes = kBlockK * 2;           // 128
constexpr uint32_t kABytes = kBlockM * kRowBytes;     // one stage of X: 16 KiB
constexpr uint32_t kSwizzleAtom = 8 * kRowBytes;      // 8 rows of 128 bytes: 1 KiB
constexpr uint32_t kNBoxBytes = kBlockK * kRowBytes;  // an N-major box of W: 64 x 64, 8 KiB

template <int BN>
constexpr int stagesFor() {
  return BN == 128 ? 3 : 4;
}
template <int BN>
constexpr uint32_t bBytes() {
  return BN * kRowBytes;
}
template <int BN>
constexpr size_t sharedBytes() {
  // The stages, a full and an empty barrier per stage, and room to align the base to 1 KiB (the
  // 128-byte swizzle repeats every 1 KiB, and TMA and wgmma must agree on where it starts).
  return size_t(stagesFor<BN>()) * (kABytes + bBytes<BN>()) + 2 * stagesFor<BN>() * 8 + 1024;
}

// What the epilogue needs, by value.
template <class T>
struct Epilogue {
  T* y;
  const T* bias;      // nullptr without one
  const T* residual;  // nullptr without one
  int rows, n;
  LinearParams p;
  bool geluForHalf;  // p is the erf GELU: geluForHalfResult
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ inline uint32_t sharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers (PTX ISA "mbarrier") ------------------------------------------------------------

__device__ inline void barrierInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// The producer's arrival that also announces how many bytes the stage's copies will bring.
__device__ inline void barrierExpectBytes(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ inline void barrierArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the barrier's phase of this parity has completed.
__device__ inline void barrierWait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA ---------------------------------------------------------------------------------------

// The box of `map` at (x innermost, y) into shared memory at `dst`, counted on `bar`.
__device__ inline void tmaLoad(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------------

// A shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address, leading
// and stride byte offsets (all >> 4), and the 128-byte swizzle (mode 1, bits 62-63).
__device__ inline uint64_t matrixDescriptor(uint32_t address, uint32_t leading, uint32_t stride) {
  return uint64_t((address & 0x3FFFF) >> 4) | (uint64_t(leading >> 4) << 16) |
         (uint64_t(stride >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ inline void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int kPending>
__device__ inline void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads or writes of the accumulators across the asynchronous
// wgmma that own them until the wait (CUTLASS's warpgroup_fence_operand does the same).
template <int N>
__device__ inline void fenceAccumulators(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d += A B for one m64n128k16 step: A and B from shared memory through their
// descriptors, 64 FP32 accumulators per thread (PTX ISA "wgmma.mma_async").
template <class T, int kTransB>
__device__ inline void wgmmaN128(float (&d)[64], uint64_t a, uint64_t b) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, %66;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63])
        : "l"(a), "l"(b), "n"(kTransB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, %66;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63])
        : "l"(a), "l"(b), "n"(kTransB));
  }
}

// d += A B for one m64n256k16 step: A and B from shared memory through their
// descriptors, 128 FP32 accumulators per thread (PTX ISA "wgmma.mma_async").
template <class T, int kTransB>
__device__ inline void wgmmaN256(float (&d)[128], uint64_t a, uint64_t b) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
        "%111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
        "%127"
        "}, %128, %129, p, 1, 1, 0, %130;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "n"(kTransB));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
        "%111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
        "%127"
        "}, %128, %129, p, 1, 1, 0, %130;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "n"(kTransB));
  }
}

template <class T, int BN, int kTransB>
__device__ inline void wgmmaStep(float (&d)[BN / 2], uint64_t a, uint64_t b) {
  if constexpr (BN == 128)
    wgmmaN128<T, kTransB>(d, a, b);
  else
    wgmmaN256<T, kTransB>(d, a, b);
}

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
template <class T>
__device__ inline float2 unpackPair(const T* p) {
  if constexpr (std::is_same_v<T, __half>)
    return __half22float2(*reinterpret_cast<const __half2*>(p));
  else
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}

template <class T>
__device__ inline float activated(const Epilogue<T>& e, float v) {
  if (e.geluForHalf) return ops::activation::geluForHalfResult(v);
  return ops::linear::activate(e.p, v);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// kWeightsKMajor: W is [n, k] (transposeW). The grid's x walks the column tiles, so that the
// blocks resident at once share the rows of X they read.
template <class T, int BN, bool kWeightsKMajor>
__global__ void __launch_bounds__(kThreads, BN == 128 ? 2 : 1)
    linearWgmmaKernel(const __grid_constant__ CUtensorMap mapX,
                      const __grid_constant__ CUtensorMap mapW, Epilogue<T> e, int kTiles) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = stagesFor<BN>();
  constexpr uint32_t kB = bBytes<BN>();
  extern __shared__ __align__(1024) unsigned char sharedRaw[];
  const uint32_t base = (sharedAddress(sharedRaw) + 1023) & ~1023u;
  const uint32_t aBase = base, bBase = base + S * kABytes;
  const uint32_t fullBar = bBase + S * kB, emptyBar = fullBar + S * 8;
  const int tid = threadIdx.x, group = tid / 128;
  const int m0 = static_cast<int>(blockIdx.y) * kBlockM, n0 = static_cast<int>(blockIdx.x) * BN;

  if (tid == 0) {
    for (int s = 0; s < S; ++s) {
      barrierInit(fullBar + 8 * s, 1);
      barrierInit(emptyBar + 8 * s, kThreads);
    }
    // The barriers' initialisation visible to the copy engine before its first arrival.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // K-slice t of X and W into stage s (thread 0 only).
  auto load = [&](int t, int s) {
    const uint32_t bar = fullBar + 8 * s;
    barrierExpectBytes(bar, kABytes + kB);
    tmaLoad(aBase + s * kABytes, &mapX, t * kBlockK, m0, bar);
    if constexpr (kWeightsKMajor) {
      tmaLoad(bBase + s * kB, &mapW, t * kBlockK, n0, bar);
    } else {
#pragma unroll
      for (int j = 0; j < BN / 64; ++j)
        tmaLoad(bBase + s * kB + j * kNBoxBytes, &mapW, n0 + 64 * j, t * kBlockK, bar);
    }
  };
  if (tid == 0)
    for (int t = 0; t < S && t < kTiles; ++t) load(t, t);

  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;

  for (int kt = 0; kt < kTiles; ++kt) {
    const int s = kt % S;
    barrierWait(fullBar + 8 * s, (kt / S) & 1);
    const uint32_t a = aBase + s * kABytes + group * 64 * kRowBytes;
    const uint32_t b = bBase + s * kB;
    fenceAccumulators(d);
    wgmmaFence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      // K-major operands advance 32 bytes (16 elements) inside the swizzled 128-byte rows; the
      // N-major W advances 16 rows of its 64 x 64 boxes, which lie 8 KiB apart along N.
      const uint64_t da = matrixDescriptor(a + kk * 32, 16, kSwizzleAtom);
      const uint64_t db = kWeightsKMajor
                              ? matrixDescriptor(b + kk * 32, 16, kSwizzleAtom)
                              : matrixDescriptor(b + kk * 16 * kRowBytes, kNBoxBytes, kSwizzleAtom);
      wgmmaStep<T, BN, kWeightsKMajor ? 0 : 1>(d, da, db);
    }
    wgmmaCommit();
    fenceAccumulators(d);
    if (kt > 0) {
      // Slice kt - 1's products are done: its stage can be refilled with slice kt - 1 + S.
      wgmmaWait<1>();
      fenceAccumulators(d);
      const int done = kt - 1, ds = done % S;
      barrierArrive(emptyBar + 8 * ds);
      if (tid == 0 && done + S < kTiles) {
        barrierWait(emptyBar + 8 * ds, (done / S) & 1);
        load(done + S, ds);
      }
    }
  }
  wgmmaWait<0>();
  fenceAccumulators(d);

  // Accumulator layout (PTX ISA, wgmma m64nNk16 D fragments): warp w of the warpgroup holds rows
  // 16w..16w+15; lane l holds rows l/4 and l/4 + 8 of those, columns 8j + 2(l%4) and the next of
  // every 8-column chunk j, as d[4j], d[4j+1] (the first row) and d[4j+2], d[4j+3] (the second).
  const int warp = (tid % 128) / 32, lane = tid % 32;
  const int row0 = m0 + group * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = n0 + 8 * j + 2 * (lane % 4);
    if (col >= e.n) continue;  // n is a multiple of 8: a pair is wholly inside or outside
    float2 bias = make_float2(0.f, 0.f);
    if (e.bias) bias = unpackPair(e.bias + col);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      if (row >= e.rows) continue;
      const size_t at = static_cast<size_t>(row) * e.n + col;
      float v0 = d[4 * j + 2 * h] + bias.x, v1 = d[4 * j + 2 * h + 1] + bias.y;
      if (e.residual) {
        const float2 r = unpackPair(e.residual + at);
        v0 += r.x;
        v1 += r.y;
      }
      *reinterpret_cast<uint32_t*>(e.y + at) = packPair<T>(activated(e, v0), activated(e, v1));
    }
  }
#else
  __trap();  // only the sm_90a code is ever launched (createLinearWgmma checks the GPU)
#endif
}

// ---- host --------------------------------------------------------------------------------------

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled, a driver function, through the runtime (kiln links no libcuda); nullptr
// where the driver lacks it.
EncodeTiled tensorMapEncoder() {
  static const EncodeTiled encoder = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return EncodeTiled{nullptr};
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return encoder;
}

// A row-major [outer, inner] matrix of 16-bit elements read in boxes of boxInner x boxOuter, with
// the 128-byte swizzle.
Status encodeMatrix(CUtensorMap* map, DataType type, const void* data, int64_t outer, int64_t inner,
                    uint32_t boxInner, uint32_t boxOuter) {
  const EncodeTiled encode = tensorMapEncoder();
  if (!encode) return unsupported("linear wgmma: the driver has no cuTensorMapEncodeTiled");
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(inner) * 2};
  const cuuint32_t box[2] = {boxInner, boxOuter};
  const cuuint32_t elementStrides[2] = {1, 1};
  const CUresult r = encode(
      map,
      type == DataType::kHALF ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      2, const_cast<void*>(data), dims, strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return internalError("linear wgmma: cuTensorMapEncodeTiled failed with CUresult " +
                         std::to_string(static_cast<int>(r)));
  return Status::ok();
}

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

class LinearWgmma final : public Kernel {
 public:
  LinearWgmma(const LinearGeometry& g, int tileN, std::unique_ptr<Kernel> misaligned)
      : g_(g), tileN_(tileN), misaligned_(std::move(misaligned)) {}

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("linear wgmma: tensor-core code, no host emulation");
    const ops::linear::InputSlots s(g_.p);
    const void* bias = s.bias >= 0 ? in[s.bias] : nullptr;
    const void* residual = s.residual >= 0 ? in[s.residual] : nullptr;
    // TMA reads from 16-byte aligned matrices, the epilogue in element pairs: a binding aligned
    // less (the engine's own buffers always are) runs kiln's reference kernel instead.
    if (!aligned(in[0], 16) || !aligned(in[1], 16) || !aligned(out[0], 4) ||
        (bias && !aligned(bias, 4)) || (residual && !aligned(residual, 4)))
      return misaligned_->run(in, out, workspace, ctx);
    return g_.type == DataType::kHALF ? launch<__half>(in, out, bias, residual, ctx)
                                      : launch<__nv_bfloat16>(in, out, bias, residual, ctx);
  }

 private:
  template <class T>
  Status launch(const void* const* in, void* const* out, const void* bias, const void* residual,
                const RunContext& ctx) const {
    return tileN_ == 128 ? launchTile<T, 128>(in, out, bias, residual, ctx)
                         : launchTile<T, 256>(in, out, bias, residual, ctx);
  }

  template <class T, int BN>
  Status launchTile(const void* const* in, void* const* out, const void* bias, const void* residual,
                    const RunContext& ctx) const {
    CUtensorMap mapX, mapW;
    KILN_RETURN_IF_ERROR(encodeMatrix(&mapX, g_.type, in[0], g_.rows, g_.k, kBlockK, kBlockM));
    if (g_.p.transposeW)
      KILN_RETURN_IF_ERROR(encodeMatrix(&mapW, g_.type, in[1], g_.n, g_.k, kBlockK, BN));
    else
      KILN_RETURN_IF_ERROR(encodeMatrix(&mapW, g_.type, in[1], g_.k, g_.n, 64, kBlockK));
    Epilogue<T> e{static_cast<T*>(out[0]),
                  static_cast<const T*>(bias),
                  static_cast<const T*>(residual),
                  static_cast<int>(g_.rows),
                  static_cast<int>(g_.n),
                  g_.p,
                  g_.p.hasActivation && g_.p.activation == ActivationType::kGELU};
    const dim3 grid(static_cast<unsigned>((g_.n + BN - 1) / BN),
                    static_cast<unsigned>((g_.rows + kBlockM - 1) / kBlockM));
    const int kTiles = static_cast<int>((g_.k + kBlockK - 1) / kBlockK);
    const auto stream = static_cast<cudaStream_t>(ctx.stream);
    if (g_.p.transposeW)
      return start(linearWgmmaKernel<T, BN, true>, grid, sharedBytes<BN>(), stream, mapX, mapW, e,
                   kTiles);
    return start(linearWgmmaKernel<T, BN, false>, grid, sharedBytes<BN>(), stream, mapX, mapW, e,
                 kTiles);
  }

  template <class T>
  static Status start(void (*kernel)(CUtensorMap, CUtensorMap, Epilogue<T>, int), dim3 grid,
                      size_t bytes, cudaStream_t stream, const CUtensorMap& mapX,
                      const CUtensorMap& mapW, const Epilogue<T>& e, int kTiles) {
    // Above 48 KiB a kernel opts in to its dynamic shared memory; setting it again is cheap and
    // keeps this free of per-kernel static state.
    const cudaError_t optIn =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
    if (optIn != cudaSuccess)
      return internalError(std::string("linear wgmma: ") + cudaGetErrorString(optIn));
    kernel<<<grid, kThreads, bytes, stream>>>(mapX, mapW, e, kTiles);
    KILN_CHECK_LAUNCH("linear_wgmma");
    return Status::ok();
  }

  LinearGeometry g_;
  int tileN_;
  std::unique_ptr<Kernel>
      misaligned_;  // kiln's reference, for bindings aligned less than TMA needs
};

bool decline(std::string* whyNot, const char* tactic, const std::string& why) {
  if (whyNot) *whyNot = std::string(tactic) + ": " + why;
  return false;
}

}  // namespace

std::unique_ptr<Kernel> createLinearWgmma(const KernelConfig& c, int tileN, const char* tactic,
                                          std::string* whyNot) {
  LinearGeometry g;
  if (!readLinear(c, tactic, &g, whyNot)) return nullptr;
  if (g.type != DataType::kHALF && g.type != DataType::kBF16) {
    decline(whyNot, tactic, std::string("fp16 and bf16 only, got ") + dataTypeName(g.type));
    return nullptr;
  }
  if (g.rows == 0 || g.n == 0 || g.k == 0) {
    decline(whyNot, tactic, "an empty product (rows, N or K is 0) is left to the reference");
    return nullptr;
  }
  if (g.k % 8 != 0 || g.n % 8 != 0) {
    decline(whyNot, tactic,
            "K and N must be multiples of 8 (the tensor memory accelerator reads rows whose "
            "strides are multiples of 16 bytes), got K = " +
                std::to_string(g.k) + ", N = " + std::to_string(g.n));
    return nullptr;
  }
  if (g.rows > int64_t{65535} * kBlockM || g.rows * g.n > INT64_C(1) << 40 || g.k > INT32_MAX ||
      g.n > INT32_MAX) {
    decline(whyNot, tactic, "more rows than its grid covers, or a dimension beyond int");
    return nullptr;
  }
  if (deviceCount() > 0) {
    int index = 0;
    DeviceInfo info;
    if (!currentDevice(index) || !getDeviceInfo(index, info) || info.major != 9 ||
        info.minor != 0) {
      decline(whyNot, tactic, "sm_90a code, for a GPU of compute capability 9.0 only");
      return nullptr;
    }
  }
  std::unique_ptr<Kernel> misaligned = createLinearReference(c, whyNot);
  if (!misaligned) return nullptr;
  return std::make_unique<LinearWgmma>(g, tileN, std::move(misaligned));
}

}  // namespace kiln::cuda
