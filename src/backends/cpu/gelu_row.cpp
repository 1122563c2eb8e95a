#include "backends/cpu/gelu_row.h"

#include "backends/cpu/gelu_term.h"

namespace kiln::cpu {
namespace {

// Compiled at -O3 whatever the build type, as sgemm.cpp's hot loop (GCC's -O2 cost model may
// leave it scalar).
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_GELU_O3 __attribute__((optimize("O3")))
#else
#define KILN_GELU_O3
#endif

KILN_GELU_O3 void geluBaseline(float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = geluErfTerm(row[j]);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target("avx2,fma"))) KILN_GELU_O3 void geluAvx2(float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = geluErfTerm(row[j]);
}
#endif

using RowFunction = void (*)(float*, int64_t);

RowFunction pick() {
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &geluAvx2;
#endif
  return &geluBaseline;
}

}  // namespace

void geluErfRow(float* row, int64_t n) {
  static const RowFunction f = pick();  // thread-safe, once per process
  f(row, n);
}

}  // namespace kiln::cpu
