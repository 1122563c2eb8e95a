#include "backends/cpu/gelu_row.h"

#include "backends/cpu/gelu_term.h"
#include "backends/cpu/isa_variants.h"

namespace kiln::cpu {
namespace {

KILN_CPU_O3 void geluBaseline(float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = geluErfTerm(row[j]);
}

#ifdef KILN_CPU_X86_VARIANTS
__attribute__((target("avx2,fma"))) KILN_CPU_O3 void geluAvx2(float* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) row[j] = geluErfTerm(row[j]);
}
#endif

using RowFunction = void (*)(float*, int64_t);

RowFunction pick() {
#ifdef KILN_CPU_X86_VARIANTS
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
