// geluErfTerm (backends/cpu/gelu_term.h), the vectorized erf GELU of the CPU's Linear epilogue:
// within a few ulp of the exact GELU, relative, over the range where it is neither 0 nor x (its
// negative tail included, where it is closer than the erff form), and the special values.
#include "backends/cpu/gelu_term.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/activation/activation_semantics.h"

namespace kiln::cpu {
namespace {

// erfc, not 1 + erf: the latter cancels in the negative tail, in double too.
double exactGelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

TEST(GeluErfTerm, WithinTheFormulasBoundOfTheExactGelu) {
  double worst = 0;
  float worstAt = 0;
  // About 270 thousand arguments over [-12.9, 14]: past 14 GELU is x in FP32, below -12.9 the
  // value is near FP32's smallest normal, and then flushed to 0 (checked below: tiny).
  for (float x = -12.9f; x <= 14.f; x += 1e-4f) {
    const double exact = exactGelu(x);
    // Relative: the fit's 1.2e-7 and a few ulp of roundings, plus the rounding of x^2 / 2 in the
    // exponent (an ulp of it, relative to the whole result), which grows in the negative tail.
    const double bound = (5e-7 + 1.5e-7 * static_cast<double>(x) * x) * std::fabs(exact);
    const double ratio = exact == 0 ? 0 : std::fabs(geluErfTerm(x) - exact) / bound;
    if (ratio > worst) {
      worst = ratio;
      worstAt = x;
    }
  }
  EXPECT_LE(worst, 1.0) << "at x = " << worstAt;
  for (float x = -20.f; x < -12.9f; x += 1e-2f)
    EXPECT_LT(std::fabs(geluErfTerm(x)), 1e-36f) << "x = " << x;
}

TEST(GeluErfTerm, CloseToTheReferencesErffForm) {
  // The two forms agree to a few ulp of the result, up to the erff form's own cancellation in
  // 1 + erf (an ulp of 1, times x / 2) in the negative tail.
  for (float x = -8.f; x <= 8.f; x += 1e-3f) {
    const float want = ops::activation::activate<ActivationType::kGELU>(x, 0.f, 0.f);
    EXPECT_NEAR(geluErfTerm(x), want, 6e-7f * std::fabs(want) + 6e-8f * std::fabs(x))
        << "x = " << x;
  }
}

TEST(GeluErfTerm, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(geluErfTerm(0.f), 0.f);
  EXPECT_EQ(geluErfTerm(inf), inf);
  // -inf * Phi(-inf) is -inf * 0: NaN, as the reference's erff form gives.
  EXPECT_TRUE(std::isnan(geluErfTerm(-inf)));
  EXPECT_TRUE(std::isnan(ops::activation::activate<ActivationType::kGELU>(-inf, 0.f, 0.f)));
  EXPECT_TRUE(std::isnan(geluErfTerm(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(geluErfTerm(100.f), 100.f);
  EXPECT_EQ(geluErfTerm(-100.f), -0.f);
  EXPECT_EQ(geluErfTerm(1e30f), 1e30f);  // x^2 overflows: the tail is 0, not NaN
}

}  // namespace
}  // namespace kiln::cpu
