// The erf GELU, x * Phi(x), in a form the compiler vectorizes, for the CPU's fused epilogues (a
// transformer's fc1 in FP32): std::erff is a call per element, and ViT-B/16's twelve GELUs over
// [197, 3072] took about 30 of its 250 ms on two cores that way.
//
// Phi(-|x|) = erfc(z) / 2 with z = |x| / sqrt(2), and erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 +
// z / 2), P a degree-9 polynomial (the Chebyshev fit of Press et al., Numerical Recipes 6.2,
// "erfcc": fractional error below 1.2e-7 for every z >= 0), its exp from expTerm. The error is
// relative: below 5e-7 + 1.5e-7 x^2 of the exact GELU (the last term the FP32 rounding of z^2 in
// the exponent), so about 4 ulp over [-1, 1] where the erff form is within 2, and closer than the
// erff form below -1, where 1 + erf cancels (5% off near -5, 0 below -5.5); values under FP32's
// smallest normal (x below about -13) are flushed to 0 (tests/backends/cpu/gelu_term_test.cpp).
// The Activation layer and the references keep erff. A file that uses it in a loop is built with
// -fno-trapping-math (exp_term.h says why).
#pragma once

#include "backends/cpu/exp_term.h"

namespace kiln::cpu {

inline float geluErfTerm(float x) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  const float z = (x < 0.f ? -x : x) * kInvSqrt2;
  const float t = 1.f / (1.f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  // Phi(-|x|); 0 once z^2 overflows (expTerm(-inf) is 0).
  const float tail = 0.5f * t * expTerm(p - z * z);
  // x * (1 - tail), not x - x * tail: +inf gives inf * 1, not inf - inf * 0.
  return x * (x >= 0.f ? 1.f - tail : tail);
}

}  // namespace kiln::cpu
