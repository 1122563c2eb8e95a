// e^x for the CPU kernels' softmax terms (a score minus its row's maximum), in a form the compiler
// vectorizes: no call and no branch, so a loop over a row of scores runs several lanes at once
// (std::expf is a call per element). A file that uses it in a loop is built with
// -fno-trapping-math, without which GCC keeps the selects below scalar.
//
// x = n ln(2) + r with n an integer and |r| <= ln(2) / 2; e^r from its Taylor polynomial of
// degree 6 (truncation below 2e-8 relative), 2^n added to the exponent bits: within a few ulp of
// e^x (tests/backends/cpu/exp_term_test.cpp). Results below e^-86.5 (about 2.7e-38, near FP32's
// smallest normal) are 0, as the CUDA kernels' ex2.approx.ftz flushes them: a softmax term that
// small is 0 beside its row's largest, which is 1. Above e^88.72 the result is +inf; NaN stays
// NaN; -inf gives 0.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace kiln::cpu {

inline float expTerm(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kRound =
      12582912.f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  // ln(2) in two parts (Cody and Waite): n * kLn2High is exact for the n that occur, so the
  // reduced argument keeps x's precision where x is large.
  constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  float t = x * kLog2e;
  t = t < -126.f ? -126.f : t;  // NaN passes both clamps (its compares are false)
  t = t > 128.f ? 128.f : t;
  const float shifted = t + kRound;
  const float n = shifted - kRound;
  const float r = (x - n * kLn2High) - n * kLn2Low;
  float p = 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  uint32_t pBits, nBits, kBits;
  std::memcpy(&pBits, &p, 4);
  std::memcpy(&nBits, &shifted, 4);
  constexpr float kRoundCopy = kRound;
  std::memcpy(&kBits, &kRoundCopy, 4);
  // n is the difference of the two bit patterns (exact for |n| < 2^22); 2^n scales p.
  const uint32_t bits = pBits + ((nBits - kBits) << 23);
  float e;
  std::memcpy(&e, &bits, 4);
  e = x < -86.5f ? 0.f : e;
  e = x > 88.72f ? std::numeric_limits<float>::infinity() : e;
  return x != x ? x : e;
}

}  // namespace kiln::cpu
