// expTerm (backends/cpu/exp_term.h): within a few ulp of e^x over FP32's normal range, and the
// special values of a softmax term.
#include "backends/cpu/exp_term.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln::cpu {
namespace {

TEST(ExpTerm, WithinAFewUlpOfExpOverTheNormalRange) {
  double worst = 0;
  float worstAt = 0;
  // About a million arguments from -86.5 to 88.7: every exponent of the result.
  for (float x = -86.5f; x <= 88.7f; x += 1.7e-4f) {
    const double exact = std::exp(static_cast<double>(x));
    const double relative = std::fabs(expTerm(x) - exact) / exact;
    if (relative > worst) {
      worst = relative;
      worstAt = x;
    }
  }
  EXPECT_LT(worst, 5e-7) << "at x = " << worstAt;  // FP32's ulp is 6e-8 to 1.2e-7 relative
}

TEST(ExpTerm, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(expTerm(0.f), 1.f);
  EXPECT_EQ(expTerm(-0.f), 1.f);
  EXPECT_EQ(expTerm(-inf), 0.f);  // a masked score
  EXPECT_EQ(expTerm(inf), inf);
  EXPECT_TRUE(std::isnan(expTerm(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(expTerm(-87.f), 0.f);  // below e^-86.5: flushed, as on the GPU
  EXPECT_EQ(expTerm(-1000.f), 0.f);
  EXPECT_EQ(expTerm(89.f), inf);
  EXPECT_NEAR(expTerm(-86.4f), std::exp(-86.4f), 1e-6 * std::exp(-86.4f));
}

}  // namespace
}  // namespace kiln::cpu
