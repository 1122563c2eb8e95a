// The special-function unit's approximations for kernels whose results are rounded to FP16 or BF16
// (or are probabilities relative to 1), where the extra instructions of exp2f and 1.f / v buy
// nothing: PTX "ex2.approx.ftz" (about 2 ulp) and "rcp.approx.ftz" (about 1 ulp), both flushing
// subnormal inputs and results to 0. On the host (the CPU's use of an op's semantics header, and
// emulated CUDA kernels) they are the exact forms.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace kiln {

KILN_HOST_DEVICE inline float approximateExp2(float v) {
#ifdef __CUDA_ARCH__
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
#else
  return exp2f(v);
#endif
}

KILN_HOST_DEVICE inline float approximateReciprocal(float v) {
#ifdef __CUDA_ARCH__
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
#else
  return 1.f / v;
#endif
}

}  // namespace kiln
