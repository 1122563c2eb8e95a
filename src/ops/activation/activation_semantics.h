// The activation formulas, shared by the CPU tactic (activation_cpu.cpp) and the CUDA kernel
// (activation_cuda.cu), so that the two backends cannot drift apart. Both evaluate every float
// activation in fp32 (CUDA converts fp16/bf16 to fp32 and rounds once on store), so the rules take
// and give float; NaN passes through every one (relu(NaN) is NaN, as in numpy). neg and abs also
// exist on int32/int64 (two's complement wrap: neg(MIN) and abs(MIN) are MIN, as in numpy), not on
// bool (any non-zero byte counts as true; the result is 0 or 1).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/approximate_math.h"
#include "core/host_device.h"
#include "kiln/ops/activation.h"

// X(kTYPE) for every activation with a float form (all but kNOT), in enum order: each backend's
// dispatch from the run-time type to activate<kTYPE>.
#define KILN_FLOAT_ACTIVATIONS(X) \
  X(kRELU)                        \
  X(kLEAKY_RELU)                  \
  X(kSIGMOID)                     \
  X(kTANH)                        \
  X(kCLIP)                        \
  X(kHARD_SWISH)                  \
  X(kELU)                         \
  X(kSELU)                        \
  X(kSOFTPLUS)                    \
  X(kHARD_SIGMOID)                \
  X(kEXP)                         \
  X(kLOG)                         \
  X(kSQRT)                        \
  X(kNEG)                         \
  X(kABS)                         \
  X(kRECIPROCAL)                  \
  X(kERF)                         \
  X(kGELU)                        \
  X(kGELU_TANH)                   \
  X(kMISH)                        \
  X(kSIN)                         \
  X(kCOS)                         \
  X(kSILU)

namespace kiln::ops::activation {

template <ActivationType kType>
KILN_HOST_DEVICE inline float activate(float x, float alpha, float beta) {
  if constexpr (kType == ActivationType::kRELU) {
    return x < 0.f ? 0.f : x;
  } else if constexpr (kType == ActivationType::kLEAKY_RELU) {
    return x < 0.f ? alpha * x : x;
  } else if constexpr (kType == ActivationType::kSIGMOID) {
    // exp(-x) overflows to inf for very negative x, which correctly gives 0.
    return 1.f / (1.f + expf(-x));
  } else if constexpr (kType == ActivationType::kTANH) {
    return tanhf(x);
  } else if constexpr (kType == ActivationType::kCLIP) {
    const float lo = x < alpha ? alpha : x;
    return beta < lo ? beta : lo;
  } else if constexpr (kType == ActivationType::kHARD_SWISH) {
    const float r = x + 3.f;
    const float c = r < 0.f ? 0.f : (r > 6.f ? 6.f : r);
    return x * c / 6.f;
  } else if constexpr (kType == ActivationType::kELU) {
    return x < 0.f ? alpha * expm1f(x) : x;
  } else if constexpr (kType == ActivationType::kSELU) {
    return beta * (x <= 0.f ? alpha * expm1f(x) : x);
  } else if constexpr (kType == ActivationType::kSOFTPLUS) {
    // log(1 + exp(x)) overflows for large x; max(x, 0) + log1p(exp(-|x|)) is the same value.
    return (x > 0.f ? x : 0.f) + log1pf(expf(-fabsf(x)));
  } else if constexpr (kType == ActivationType::kHARD_SIGMOID) {
    const float v = alpha * x + beta;
    return v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
  } else if constexpr (kType == ActivationType::kEXP) {
    return expf(x);
  } else if constexpr (kType == ActivationType::kLOG) {
    return logf(x);
  } else if constexpr (kType == ActivationType::kSQRT) {
    return sqrtf(x);
  } else if constexpr (kType == ActivationType::kNEG) {
    return -x;
  } else if constexpr (kType == ActivationType::kABS) {
    return fabsf(x);
  } else if constexpr (kType == ActivationType::kRECIPROCAL) {
    return 1.f / x;
  } else if constexpr (kType == ActivationType::kGELU) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
  } else if constexpr (kType == ActivationType::kGELU_TANH) {
    // tanhf saturates to +-1 for large |x|, so the cube overflowing to inf still gives x or 0.
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.f + tanhf(inner));
  } else if constexpr (kType == ActivationType::kMISH) {
    // softplus in its overflow-free form (as kSOFTPLUS); for large x tanhf gives exactly 1 and
    // the result is x, for very negative x softplus underflows towards 0 and so does the product.
    const float sp = (x > 0.f ? x : 0.f) + log1pf(expf(-fabsf(x)));
    return x * tanhf(sp);
  } else if constexpr (kType == ActivationType::kSIN) {
    return sinf(x);
  } else if constexpr (kType == ActivationType::kCOS) {
    return cosf(x);
  } else if constexpr (kType == ActivationType::kSILU) {
    // x times kSIGMOID's value, as the Sigmoid-then-Mul it replaces computes it (in FP32, without
    // the intermediate's rounding): -inf gives -inf * 0 = NaN there too.
    return x * (1.f / (1.f + expf(-x)));
  } else {
    static_assert(kType == ActivationType::kERF, "not has no float form");
    return erff(x);
  }
}

// GELU for a result that is rounded to FP16 or BF16: x * Phi(x) with Phi(-|x|) = erfc(|x| /
// sqrt(2)) / 2 from Abramowitz and Stegun's formula 7.1.26, erfc(z) = poly(k) * exp(-z^2) with k =
// 1 / (1 + p z) (|error| <= 1.5e-7 over z >= 0). Why: erff is about 25 instructions of selected
// polynomial coefficients, and the erf GELU pass after a transformer's fc1 is bound by them; this
// is about 12, two of them the reciprocal and the exp2 of the special-function unit. Over every
// finite FP16 input the rounded result is within one unit in the last place of the correctly
// rounded GELU (the erff form is within two), and over BF16's too but in its far negative tail,
// where the error stays under 1.5e-7 |x| / 2 and the erff form gives 0 (activation_test checks
// every value of both). FP32 results keep the erff form (activate<kGELU>).
KILN_HOST_DEVICE inline float geluForHalfResult(float x) {
  // p / sqrt(2) and the a_i / 2 of 7.1.26, so that k and the polynomial take |x| directly and
  // give Phi(-|x|); -log2(e) / 2 turns exp(-x^2 / 2) into an exp2.
  constexpr float kP = 0.3275911f * 0.70710678118654752f;
  constexpr float kA1 = 0.5f * 0.254829592f, kA2 = 0.5f * -0.284496736f, kA3 = 0.5f * 1.421413741f,
                  kA4 = 0.5f * -1.453152027f, kA5 = 0.5f * 1.061405429f;
  constexpr float kMinusHalfLog2E = -0.72134752044448170f;
  const float a = fabsf(x);
  const float k = approximateReciprocal(fmaf(kP, a, 1.f));
  const float poly = fmaf(fmaf(fmaf(fmaf(kA5, k, kA4), k, kA3), k, kA2), k, kA1) * k;
  const float tail = poly * approximateExp2(a * a * kMinusHalfLog2E);  // Phi(-|x|)
  // x * (1 - tail), not x - x * tail: +inf gives inf * 1, not inf - inf * 0.
  return x * (x >= 0.f ? 1.f - tail : tail);
}

// activate<t> for a type known only at run time (a Linear layer's fused activation, the CUDA
// kernel's argument): every type with a float form; kNOT, which has none, gives x.
KILN_HOST_DEVICE inline float activateByType(ActivationType t, float x, float alpha, float beta) {
  switch (t) {
#define KILN_ACTIVATION_CASE(kTYPE) \
  case ActivationType::kTYPE:       \
    return activate<ActivationType::kTYPE>(x, alpha, beta);
    KILN_FLOAT_ACTIVATIONS(KILN_ACTIVATION_CASE)
#undef KILN_ACTIVATION_CASE
    case ActivationType::kNOT:
      break;
  }
  return x;
}

// The activation that a layer with a fused epilogue applies last (Linear's and Convolution's
// params: hasActivation, activation, activationAlpha, activationBeta), or v itself when it has
// none.
template <class P>
KILN_HOST_DEVICE inline float fusedActivation(const P& p, float v) {
  return p.hasActivation ? activateByType(p.activation, v, p.activationAlpha, p.activationBeta) : v;
}

// Integer neg and abs: negation through the unsigned type wraps instead of overflowing.
template <class I>
KILN_HOST_DEVICE inline I wrapNeg(I v) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(U{0} - static_cast<U>(v));
}
template <class I>
KILN_HOST_DEVICE inline I wrapAbs(I v) {
  return v < 0 ? wrapNeg(v) : v;
}

// Logical not on bool bytes.
KILN_HOST_DEVICE inline uint8_t logicalNot(uint8_t v) { return v == 0 ? 1 : 0; }

}  // namespace kiln::ops::activation
