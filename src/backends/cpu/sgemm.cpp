#include "backends/cpu/sgemm.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu {
namespace {

// Register block: an MR x NR tile of C stays in registers across the k loop. With NR = 16 a row
// of the tile is four SSE, two AVX or one AVX-512 register.
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 16;
// Cache blocks: a KC x NR sliver of B stays in L1, an MC x KC block of A in L2, a KC x NC panel
// of B in L3.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 72;  // multiple of kMR
constexpr int64_t kNC = 4080;  // multiple of kNR

constexpr int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The hot loops are compiled at -O3 whatever the build type (GCC's -O2 cost model leaves the
// micro-kernel scalar). On x86-64 with GCC they are also compiled for AVX2 and AVX-512 and the
// best version is picked once, at first use, from the CPU's features: the source stays plain C++.
// (Explicit dispatch rather than target_clones: an ifunc resolver runs before the sanitizer
// runtimes are up, and crashes TSan builds.) Each output element is accumulated in the same
// order on every call, so results are bit-identical from call to call on one machine; versions
// with FMA may round differently from the baseline one.
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_SGEMM_O3 __attribute__((optimize("O3")))
#else
#define KILN_SGEMM_O3
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KILN_SGEMM_DISPATCH 1
#endif

inline float elementAt(const MatrixRef& x, int64_t r, int64_t c) {
  return x.trans ? x.data[c * x.ld + r] : x.data[r * x.ld + c];
}

// Packs rows [r0, r0+mc) x cols [p0, p0+kc) of op(A) as MR-row strips, each stored k-major
// ([kc][MR]), zero-padded to whole strips.
void packABlock(const MatrixRef& a, int64_t m, int64_t r0, int64_t mc, int64_t p0, int64_t kc,
                float* dst) {
  for (int64_t s = 0; s < mc; s += kMR) {
    const int64_t rows = std::min(kMR, m - (r0 + s));
    for (int64_t i = 0; i < kMR; ++i) {
      if (i >= rows) {
        for (int64_t p = 0; p < kc; ++p) dst[p * kMR + i] = 0.f;
        continue;
      }
      const int64_t r = r0 + s + i;
      if (!a.trans) {
        const float* src = a.data + r * a.ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * kMR + i] = src[p];
      } else {
        for (int64_t p = 0; p < kc; ++p) dst[p * kMR + i] = elementAt(a, r, p0 + p);
      }
    }
    dst += kMR * kc;
  }
}

// Packs rows [p0, p0+kc) x cols [c0, c0+nc) of op(B) as NR-column strips, each stored k-major
// ([kc][NR]), zero-padded to whole strips.
void packBBlock(const MatrixRef& b, int64_t n, int64_t p0, int64_t kc, int64_t c0, int64_t nc,
                float* dst) {
  for (int64_t t = 0; t < nc; t += kNR) {
    const int64_t cols = std::min(kNR, n - (c0 + t));
    for (int64_t p = 0; p < kc; ++p) {
      float* d = dst + p * kNR;
      if (!b.trans) {
        const float* src = b.data + (p0 + p) * b.ld + c0 + t;
        for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
      } else {
        for (int64_t j = 0; j < cols; ++j) d[j] = elementAt(b, p0 + p, c0 + t + j);
      }
      for (int64_t j = cols; j < kNR; ++j) d[j] = 0.f;
    }
    dst += kNR * kc;
  }
}

// The register-blocked kernel: tile = sum over p of a[p][0..MR) (outer) b[p][0..NR). Fixed trip
// counts let the compiler unroll i and vectorize j; the accumulators never leave registers.
__attribute__((always_inline)) inline void microKernel(int64_t kc, const float* __restrict a,
                                                       const float* __restrict b,
                                                       float* __restrict tile) {
  float acc[kMR][kNR] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* ap = a + p * kMR;
    const float* bp = b + p * kNR;
#pragma GCC unroll 8
    for (int64_t i = 0; i < kMR; ++i) {
      const float ai = ap[i];
#pragma GCC unroll 16
      for (int64_t j = 0; j < kNR; ++j) acc[i][j] += ai * bp[j];
    }
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kNR; ++j) tile[i * kNR + j] = acc[i][j];
}

// Writes an mr x nr tile into C. The first k block applies beta (and does not read C when beta
// is 0); later blocks accumulate.
inline void storeTile(const float* tile, int64_t mr, int64_t nr, float alpha, float beta,
                      bool first, float* c, int64_t ldc) {
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* t = tile + i * kNR;
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
__attribute__((always_inline)) inline void macroKernelBody(int64_t mc, int64_t nc, int64_t kc,
                                                           const float* ap, const float* bp,
                                                           float alpha, float beta, bool first,
                                                           float* c, int64_t ldc) {
  alignas(64) float tile[kMR * kNR];
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    const int64_t nr = std::min(kNR, nc - jr);
    const float* b = bp + jr * kc;
    for (int64_t ir = 0; ir < mc; ir += kMR) {
      const int64_t mr = std::min(kMR, mc - ir);
      microKernel(kc, ap + ir * kc, b, tile);
      storeTile(tile, mr, nr, alpha, beta, first, c + ir * ldc + jr, ldc);
    }
  }
}

using MacroKernel = void (*)(int64_t, int64_t, int64_t, const float*, const float*, float, float,
                             bool, float*, int64_t);

KILN_SGEMM_O3 void macroKernelBaseline(int64_t mc, int64_t nc, int64_t kc, const float* ap,
                                       const float* bp, float alpha, float beta, bool first,
                                       float* c, int64_t ldc) {
  macroKernelBody(mc, nc, kc, ap, bp, alpha, beta, first, c, ldc);
}

#ifdef KILN_SGEMM_DISPATCH
__attribute__((target("avx2,fma"))) KILN_SGEMM_O3 void macroKernelAvx2(
    int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float alpha,
    float beta, bool first, float* c, int64_t ldc) {
  macroKernelBody(mc, nc, kc, ap, bp, alpha, beta, first, c, ldc);
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) KILN_SGEMM_O3 void macroKernelAvx512(
    int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float alpha,
    float beta, bool first, float* c, int64_t ldc) {
  macroKernelBody(mc, nc, kc, ap, bp, alpha, beta, first, c, ldc);
}
#endif

MacroKernel pickMacroKernel() {
#ifdef KILN_SGEMM_DISPATCH
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return macroKernelAvx512;
  if (avx2) return macroKernelAvx2;
#endif
  return macroKernelBaseline;
}

float* alignFloats(void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<float*>((v + 63) & ~static_cast<uintptr_t>(63));
}

size_t packABufferFloats(int64_t m, int64_t k) {
  return static_cast<size_t>(roundUp(std::min(m, kMC), kMR) * std::min(k, kKC));
}
size_t packBBufferFloats(int64_t n, int64_t k) {
  return static_cast<size_t>(roundUp(std::min(n, kNC), kNR) * std::min(k, kKC));
}

}  // namespace

// A packed whole matrix is the concatenation, over k blocks of KC, of every strip of that block:
// block p0 starts at p0 * paddedRows and strip s of it at s * MR * kc, exactly the layout
// packABlock writes for a block of MC rows, so sgemm() can point into it.
PackedMatrix PackedMatrix::packA(int64_t m, int64_t k, MatrixRef a) {
  PackedMatrix pm;
  pm.rows_ = m;
  pm.cols_ = k;
  pm.isA_ = true;
  const int64_t mp = roundUp(m, kMR);
  pm.data_.assign(static_cast<size_t>(mp * k), 0.f);
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    packABlock(a, m, 0, m, p0, kc, pm.data_.data() + p0 * mp);
  }
  return pm;
}

PackedMatrix PackedMatrix::packB(int64_t k, int64_t n, MatrixRef b) {
  PackedMatrix pm;
  pm.rows_ = k;
  pm.cols_ = n;
  pm.isA_ = false;
  const int64_t np = roundUp(n, kNR);
  pm.data_.assign(static_cast<size_t>(np * k), 0.f);
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    packBBlock(b, n, p0, kc, 0, n, pm.data_.data() + p0 * np);
  }
  return pm;
}

size_t sgemmWorkspaceSize(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  return (packABufferFloats(m, k) + packBBufferFloats(n, k)) * sizeof(float) + 128;
}

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a,
           const GemmOperand& b, float beta, float* c, int64_t ldc, void* workspace) {
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
  static const MacroKernel macroKernel = pickMacroKernel();  // thread-safe, once
  float* bufA = alignFloats(workspace);
  float* bufB = alignFloats(bufA + packABufferFloats(m, k));
  const int64_t mp = roundUp(m, kMR);
  const int64_t np = roundUp(n, kNR);

  for (int64_t jc = 0; jc < n; jc += kNC) {
    const int64_t nc = std::min(kNC, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKC) {
      const int64_t kc = std::min(kKC, k - pc);
      const float* bp;
      if (b.packed) {
        bp = b.packed->data() + pc * np + jc * kc;
      } else {
        packBBlock(b.raw, n, pc, kc, jc, nc, bufB);
        bp = bufB;
      }
      for (int64_t ic = 0; ic < m; ic += kMC) {
        const int64_t mc = std::min(kMC, m - ic);
        const float* ap;
        if (a.packed) {
          ap = a.packed->data() + pc * mp + ic * kc;
        } else {
          packABlock(a.raw, m, ic, mc, pc, kc, bufA);
          ap = bufA;
        }
        macroKernel(mc, nc, kc, ap, bp, alpha, beta, pc == 0, c + ic * ldc + jc, ldc);
      }
    }
  }
}

}  // namespace kiln::cpu
