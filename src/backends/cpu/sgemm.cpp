#include "backends/cpu/sgemm.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/isa_variants.h"
#include "backends/cpu/thread_pool.h"

namespace kiln::cpu {
namespace {

// Cache blocks (BLIS loop order): a KC x NR sliver of B stays in L1 across the MR strips of A,
// an MC x KC block of A stays in L2, a KC x NC panel of B in L2/L3.
constexpr int64_t kKC = 256;
constexpr int64_t kNC = 512;       // a multiple of every variant's NR
constexpr int64_t kMCStrips = 12;  // MC = 12 MR: an A block of 72-96 KiB

constexpr int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The hot loop is compiled as isa_variants.h says: at -O3, and on x86-64 with GCC also for AVX2
// and AVX-512, each with the register block that fits its register file. Each output element is
// accumulated in the same order on every call, so results are bit-identical from call to call on
// one machine.

inline float elementAt(const MatrixRef& x, int64_t r, int64_t c) {
  return x.trans ? x.data[c * x.ld + r] : x.data[r * x.ld + c];
}

// Packs rows [r0, r0+mc) x cols [p0, p0+kc) of op(A) (m rows in all) as mr-row strips, each
// stored k-major ([kc][mr]), zero-padded to whole strips.
void packABlock(const MatrixRef& a, int64_t m, int64_t r0, int64_t mc, int64_t p0, int64_t kc,
                int64_t mr, float* dst) {
  for (int64_t s = 0; s < mc; s += mr) {
    const int64_t rows = std::min(mr, m - (r0 + s));
    for (int64_t i = 0; i < mr; ++i) {
      if (i >= rows) {
        for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = 0.f;
        continue;
      }
      const int64_t r = r0 + s + i;
      if (!a.trans) {
        const float* src = a.data + r * a.ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = src[p];
      } else {
        for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = elementAt(a, r, p0 + p);
      }
    }
    dst += mr * kc;
  }
}

// Packs rows [p0, p0+kc) x cols [c0, c0+nc) of op(B) (n columns in all) as nr-column strips,
// each stored k-major ([kc][nr]), zero-padded to whole strips.
void packBBlock(const MatrixRef& b, int64_t n, int64_t p0, int64_t kc, int64_t c0, int64_t nc,
                int64_t nr, float* dst) {
  for (int64_t t = 0; t < nc; t += nr) {
    const int64_t cols = std::min(nr, n - (c0 + t));
    for (int64_t p = 0; p < kc; ++p) {
      float* d = dst + p * nr;
      if (!b.trans) {
        const float* src = b.data + (p0 + p) * b.ld + c0 + t;
        for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
      } else {
        for (int64_t j = 0; j < cols; ++j) d[j] = elementAt(b, p0 + p, c0 + t + j);
      }
      for (int64_t j = cols; j < nr; ++j) d[j] = 0.f;
    }
    dst += nr * kc;
  }
}

// The register-blocked kernel: tile = sum over p of the outer product a[p][0..MR) b[p][0..NR).
// i is unrolled fully and j is left to the loop vectorizer (unrolling j fully first would
// leave scalar code for the SLP vectorizer, measured 2x slower), so every accumulator lives in
// a vector register. NR is a multiple of 16 so that the j loop always vectorizes.
template <int64_t MR, int64_t NR>
__attribute__((always_inline)) inline void microKernel(int64_t kc, const float* __restrict a,
                                                       const float* __restrict b,
                                                       float* __restrict tile) {
  static_assert(MR <= 16 && NR % 16 == 0);
  float acc[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* ap = a + p * MR;
    const float* bp = b + p * NR;
#pragma GCC unroll 16
    for (int64_t i = 0; i < MR; ++i) {
      const float ai = ap[i];
#pragma GCC unroll 8
      for (int64_t j = 0; j < NR; ++j) acc[i][j] += ai * bp[j];
    }
  }
  for (int64_t i = 0; i < MR; ++i)
    for (int64_t j = 0; j < NR; ++j) tile[i * NR + j] = acc[i][j];
}

// Writes the top-left mr x nr of a tile (row stride NR) into C. The first k block applies beta
// (and does not read C when beta is 0); later blocks accumulate.
template <int64_t NR>
__attribute__((always_inline)) inline void storeTile(const float* tile, int64_t mr, int64_t nr,
                                                     float alpha, float beta, bool first, float* c,
                                                     int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* t = tile + i * NR;
    if (!first || beta == 1.f) {
      for (int64_t j = 0; j < nr; ++j) row[j] += alpha * t[j];
    } else if (beta == 0.f) {
      for (int64_t j = 0; j < nr; ++j) row[j] = alpha * t[j];
    } else {
      for (int64_t j = 0; j < nr; ++j) row[j] = beta * row[j] + alpha * t[j];
    }
  }
}

// One mc x nc block of C from a packed A block and a packed B panel.
template <int64_t MR, int64_t NR>
__attribute__((always_inline)) inline void macroKernelBody(int64_t mc, int64_t nc, int64_t kc,
                                                           const float* ap, const float* bp,
                                                           float alpha, float beta, bool first,
                                                           float* c, int64_t ldc) {
  alignas(64) float tile[MR * NR];
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t nr = std::min(NR, nc - jr);
    const float* b = bp + jr * kc;
    for (int64_t ir = 0; ir < mc; ir += MR) {
      microKernel<MR, NR>(kc, ap + ir * kc, b, tile);
      storeTile<NR>(tile, std::min(MR, mc - ir), nr, alpha, beta, first, c + ir * ldc + jr, ldc);
    }
  }
}

#define KILN_SGEMM_MACRO_KERNEL(name, attributes, MR, NR)                                          \
  attributes KILN_CPU_O3 void name(int64_t mc, int64_t nc, int64_t kc, const float* ap,            \
                                   const float* bp, float alpha, float beta, bool first, float* c, \
                                   int64_t ldc) {                                                  \
    macroKernelBody<MR, NR>(mc, nc, kc, ap, bp, alpha, beta, first, c, ldc);                       \
  }

// Register blocks, each the fastest measured for its register file: 4x16 keeps 16 SSE
// accumulators, 6x16 keeps 12 of AVX2's 16 registers, 8x32 keeps 16 of AVX-512's 32.
constexpr int64_t kBaselineMR = 4, kBaselineNR = 16;
static_assert(kNC % kBaselineNR == 0);
KILN_SGEMM_MACRO_KERNEL(macroKernelBaseline, , kBaselineMR, kBaselineNR)

#ifdef KILN_CPU_X86_VARIANTS
constexpr int64_t kAvx2MR = 6, kAvx2NR = 16;
constexpr int64_t kAvx512MR = 8, kAvx512NR = 32;
static_assert(kNC % kAvx2NR == 0 && kNC % kAvx512NR == 0);
KILN_SGEMM_MACRO_KERNEL(macroKernelAvx2, __attribute__((target("avx2,fma"))), kAvx2MR, kAvx2NR)
KILN_SGEMM_MACRO_KERNEL(macroKernelAvx512,
                        __attribute__((target("avx512f,avx512vl,avx2,fma,"
                                              "prefer-vector-width=512"))),
                        kAvx512MR, kAvx512NR)
#endif

// One compiled version of the hot loop and the register block it was compiled for; the packing
// layout follows mr and nr.
struct Variant {
  const char* name;
  int64_t mr, nr;
  void (*macroKernel)(int64_t, int64_t, int64_t, const float*, const float*, float, float, bool,
                      float*, int64_t);
  int64_t mc() const { return mr * kMCStrips; }
};

const Variant kBaseline = {"baseline", kBaselineMR, kBaselineNR, macroKernelBaseline};

// The best version the CPU runs. KILN_SGEMM=baseline|avx2 can force a lesser one (to test or
// compare them); it never selects one the CPU lacks.
const Variant& pickVariant() {
#ifdef KILN_CPU_X86_VARIANTS
  static const Variant kAvx2 = {"avx2", kAvx2MR, kAvx2NR, macroKernelAvx2};
  static const Variant kAvx512 = {"avx512", kAvx512MR, kAvx512NR, macroKernelAvx512};
  __builtin_cpu_init();
  const char* force = std::getenv("KILN_SGEMM");
  const bool allowAvx2 = !force || std::strcmp(force, "baseline") != 0;
  const bool allowAvx512 = allowAvx2 && (!force || std::strcmp(force, "avx2") != 0);
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (allowAvx512 && avx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512vl"))
    return kAvx512;
  if (allowAvx2 && avx2) return kAvx2;
#endif
  return kBaseline;
}

const Variant& variant() {
  static const Variant& v = pickVariant();  // thread-safe, once per process
  return v;
}

float* alignFloats(void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<float*>((v + 63) & ~static_cast<uintptr_t>(63));
}

size_t packABufferFloats(const Variant& v, int64_t m, int64_t k) {
  return static_cast<size_t>(roundUp(std::min(m, v.mc()), v.mr) * std::min(k, kKC));
}
size_t packBBufferFloats(const Variant& v, int64_t n, int64_t k) {
  return static_cast<size_t>(roundUp(std::min(n, kNC), v.nr) * std::min(k, kKC));
}

// A whole operand packed as the concatenation of its k blocks of KC: block p0 starts at
// p0 * padded (`padded`: its rows (A) or columns (B) rounded up to whole strips) and is written by
// packBlock(p0, kc, dst).
template <class PackBlock>
std::vector<float> packWhole(int64_t padded, int64_t k, PackBlock&& packBlock) {
  std::vector<float> data(static_cast<size_t>(padded * k), 0.f);
  for (int64_t p0 = 0; p0 < k; p0 += kKC)
    packBlock(p0, std::min(kKC, k - p0), data.data() + p0 * padded);
  return data;
}

}  // namespace

const char* sgemmVariantName() { return variant().name; }

// A packed whole matrix is the concatenation, over k blocks of KC, of every strip of that block:
// block p0 starts at p0 * paddedRows and strip s of it at s * mr * kc, exactly the layout
// packABlock writes for a block of mc rows, so sgemm() can point into it.
PackedMatrix PackedMatrix::packA(int64_t m, int64_t k, MatrixRef a) {
  const Variant& v = variant();
  return PackedMatrix(m, k, true,
                      packWhole(roundUp(m, v.mr), k, [&](int64_t p0, int64_t kc, float* dst) {
                        packABlock(a, m, 0, m, p0, kc, v.mr, dst);
                      }));
}

PackedMatrix PackedMatrix::packB(int64_t k, int64_t n, MatrixRef b) {
  const Variant& v = variant();
  return PackedMatrix(k, n, false,
                      packWhole(roundUp(n, v.nr), k, [&](int64_t p0, int64_t kc, float* dst) {
                        packBBlock(b, n, p0, kc, 0, n, v.nr, dst);
                      }));
}

namespace {

// Threads split C into a grid of rectangles, one task each, every rectangle's edges on whole
// register tiles (multiples of MR rows and NR columns) except where C ends. Each task runs the
// single-threaded loops over its rectangle, so every tile is computed exactly as it would be
// with one thread (same packed data, same k blocks in the same order, same edge handling):
// results are bit-identical whatever the thread count or which thread takes which task.
//
// Below kMacsPerThread multiply-adds per thread, handing work to another thread costs more than
// it saves: measured on a 2-core AVX-512 VM (bench/cpu_tactics_bench), with the workers still
// spinning from the previous call, 128^3 (2M) was 0.76x on 2 threads, 160^3 (4M) 1.1x and
// 197x197x64 (2.5M) 1.6x; 256^3 1.8x, the ViT-B/16 products 1.9-2.0x.
constexpr int64_t kMacsPerThread = int64_t{1} << 20;

struct Split {
  int slots = 1;                       // threads that share the work, each with its own scratch
  int64_t rowParts = 1, colParts = 1;  // the grid of tasks: rowParts x colParts rectangles
};

// Monotonic in m, n, k and threads (sgemmWorkspaceSize relies on it: a smaller product run in a
// workspace sized for a larger one needs no more slots); the grid's shape does not change the
// slots. `aPacked` / `bPacked`: that operand was packed ahead (a weight), so splitting along it
// packs nothing again.
Split planSplit(const Variant& v, int64_t m, int64_t n, int64_t k, int threads,
                bool aPacked = false, bool bPacked = false) {
  Split s;
  const int64_t rowUnits = (m + v.mr - 1) / v.mr, colUnits = (n + v.nr - 1) / v.nr;
  const int64_t macs = m * n * k;
  const int64_t useful =
      std::min({static_cast<int64_t>(threads), macs / kMacsPerThread, rowUnits * colUnits});
  if (useful < 2) return s;
  s.slots = static_cast<int>(useful);
  // Each column part packs A's rows (m x k) and each row part packs B's columns (n x k), unless
  // that operand was packed ahead: take the grid of at least `slots` tasks that packs least.
  // (With B a packed weight, ViT-B/16's [197,3072]x[3072,768] split into two column halves packed
  // A twice and ran 1.5x to 2.0x on 2 threads from run to run, against a steady 1.9x split into row
  // halves; bench/cpu_tactics_bench.)
  int64_t bestCost = -1;
  for (int64_t cols = 1; cols <= std::min<int64_t>(useful, colUnits); ++cols) {
    const int64_t rows = (useful + cols - 1) / cols;
    if (rows > rowUnits) continue;
    const int64_t cost = (aPacked ? 0 : cols * m) + (bPacked ? 0 : rows * n);
    if (bestCost < 0 || cost < bestCost) {
      bestCost = cost;
      s.rowParts = rows;
      s.colParts = cols;
    }
  }
  return s;
}

// Floats of packing scratch one thread needs (its A block and B panel).
size_t slotBytes(const Variant& v, int64_t m, int64_t n, int64_t k) {
  // 128: alignFloats may skip up to 63 bytes before each of the two buffers.
  return (packABufferFloats(v, m, k) + packBBufferFloats(v, n, k)) * sizeof(float) + 128;
}

// The block at `offset` of an operand packed when the kernel was made, or, for one packed per run,
// `pack()` writes it into `buffer`.
template <class Pack>
const float* packedOr(const GemmOperand& operand, int64_t offset, float* buffer, Pack&& pack) {
  if (operand.packed) return operand.packed->data() + offset;
  pack();
  return buffer;
}

// Rows [r0, r1) x columns [c0, c1) of C, in the single-threaded BLIS loop order, packing into
// `scratch` (slotBytes of it).
void gemmRect(const Variant& v, int64_t m, int64_t n, int64_t k, int64_t r0, int64_t r1, int64_t c0,
              int64_t c1, float alpha, const GemmOperand& a, const GemmOperand& b, float beta,
              float* c, int64_t ldc, void* scratch) {
  const int64_t mcMax = v.mc();
  float* bufA = alignFloats(scratch);
  float* bufB = alignFloats(bufA + packABufferFloats(v, m, k));
  // Offsets into whole pre-packed operands use the whole operand's padded size.
  const int64_t mp = roundUp(m, v.mr);
  const int64_t np = roundUp(n, v.nr);

  for (int64_t jc = c0; jc < c1; jc += kNC) {
    const int64_t nc = std::min(kNC, c1 - jc);
    for (int64_t pc = 0; pc < k; pc += kKC) {
      const int64_t kc = std::min(kKC, k - pc);
      const float* bp = packedOr(b, pc * np + jc * kc, bufB,
                                 [&] { packBBlock(b.raw, n, pc, kc, jc, nc, v.nr, bufB); });
      for (int64_t ic = r0; ic < r1; ic += mcMax) {
        const int64_t mc = std::min(mcMax, r1 - ic);
        const float* ap = packedOr(a, pc * mp + ic * kc, bufA,
                                   [&] { packABlock(a.raw, m, ic, mc, pc, kc, v.mr, bufA); });
        v.macroKernel(mc, nc, kc, ap, bp, alpha, beta, pc == 0, c + ic * ldc + jc, ldc);
      }
    }
  }
}

}  // namespace

// Sized for the process's whole pool (not the caller's ScopedThreadLimit), so a workspace sized
// once serves calls from any thread.
size_t sgemmWorkspaceSize(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const Variant& v = variant();
  return static_cast<size_t>(planSplit(v, m, n, k, cpuThreadCount()).slots) * slotBytes(v, m, n, k);
}

int sgemmThreads(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 1;
  return planSplit(variant(), m, n, k, cpuThreadsForCaller()).slots;
}

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b,
           float beta, float* c, int64_t ldc, void* workspace) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // op(A) op(B) is all zeros: only beta acts
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      if (beta == 0.f) {
        std::fill(row, row + n, 0.f);
      } else if (beta != 1.f) {
        for (int64_t j = 0; j < n; ++j) row[j] *= beta;
      }
    }
    return;
  }
  const Variant& v = variant();
  const Split split =
      planSplit(v, m, n, k, cpuThreadsForCaller(), a.packed != nullptr, b.packed != nullptr);
  if (split.slots == 1) {
    gemmRect(v, m, n, k, 0, m, 0, n, alpha, a, b, beta, c, ldc, workspace);
    return;
  }
  const size_t slot = slotBytes(v, m, n, k);
  const int64_t rowUnits = (m + v.mr - 1) / v.mr, colUnits = (n + v.nr - 1) / v.nr;
  // Part i of `parts` over `units` tiles of `size` each, clipped to `extent`.
  auto bound = [](int64_t i, int64_t parts, int64_t units, int64_t size, int64_t extent) {
    return std::min(extent, i * units / parts * size);
  };
  parallelFor(split.rowParts * split.colParts, split.slots, [&](int64_t task, int threadSlot) {
    const int64_t ri = task / split.colParts, ci = task % split.colParts;
    const int64_t r0 = bound(ri, split.rowParts, rowUnits, v.mr, m);
    const int64_t r1 = bound(ri + 1, split.rowParts, rowUnits, v.mr, m);
    const int64_t c0 = bound(ci, split.colParts, colUnits, v.nr, n);
    const int64_t c1 = bound(ci + 1, split.colParts, colUnits, v.nr, n);
    if (r0 >= r1 || c0 >= c1) return;
    gemmRect(v, m, n, k, r0, r1, c0, c1, alpha, a, b, beta, c, ldc,
             static_cast<char*>(workspace) + static_cast<size_t>(threadSlot) * slot);
  });
}

}  // namespace kiln::cpu
