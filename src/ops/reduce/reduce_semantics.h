// The NaN rules of reduce, shared by the CPU reference (reduce_cpu.cpp) and the CUDA reference
// kernel (reduce_cuda.cu), so that the two backends cannot drift apart:
//   max propagates NaN: a NaN replaces the running maximum, and nothing replaces a NaN.
//   argmax is the first index of the maximum; NaN counts as larger than every number (numpy's
//   argmax), so the first NaN along the axis wins. Integers compare exactly in their own type.
// (The CUDA contiguous_rows kernel combines per-thread partial results in a block reduction; it
// keeps the same rules in its own combining functions.)
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::reduce {

// Whether v replaces the running maximum m (of max and argmax): v is larger or NaN. Once m is NaN
// nothing is larger, and max stays NaN (argmax stops scanning).
template <class V>
KILN_HOST_DEVICE inline bool replacesMax(V m, V v) {
  return v > m || v != v;
}

// argmax over n >= 1 values load(0), ..., load(n - 1) compared as C.
template <class C, class Load>
KILN_HOST_DEVICE inline int64_t argmaxIndex(int64_t n, const Load& load) {
  int64_t best = 0;
  C m = load(0);
  // Once m is NaN nothing replaces it: a NaN is only taken when m is not NaN yet.
  for (int64_t k = 1; m == m && k < n; ++k) {
    const C e = load(k);
    if (replacesMax(m, e)) {
      m = e;
      best = k;
    }
  }
  return best;
}

}  // namespace kiln::ops::reduce
