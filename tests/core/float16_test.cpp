// include/kiln/float16.h against an independent model of IEEE half and bfloat16: exhaustive
// decoding and round trips, every rounding midpoint, subnormals, overflow, inf and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/float16.h"
#include "random_test_util.h"

namespace kiln {
namespace {

// A half's value from its fields, in double (exact).
double halfValue(uint16_t h) {
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

// Round-to-nearest-even into half, by searching the ordered positive finite halves.
uint16_t nearestHalf(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return 0x7e00;
  const double x = std::fabs(static_cast<double>(f));
  if (x >= 65520.0) return sign | 0x7c00;  // at or past the midpoint of 65504 and 2^16
  uint16_t lo = 0, hi = 0x7bff;            // largest h with value <= x
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (halfValue(mid) <= x)
      lo = mid;
    else
      hi = static_cast<uint16_t>(mid - 1);
  }
  if (lo == 0x7bff) return sign | lo;  // below 65520: 65504 is nearest
  const double dl = x - halfValue(lo), du = halfValue(static_cast<uint16_t>(lo + 1)) - x;
  const uint16_t r = dl < du   ? lo
                     : du < dl ? static_cast<uint16_t>(lo + 1)
                               : ((lo & 1) ? static_cast<uint16_t>(lo + 1) : lo);
  return sign | r;
}

TEST(Float16, EveryHalfDecodesAndRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = halfToFloat(h);
    const double want = halfValue(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << i;
      // NaN stays a NaN of the same sign; the payload is not promised (it is quietened).
      const uint16_t back = floatToHalf(f);
      ASSERT_TRUE(std::isnan(halfValue(back))) << std::hex << i;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), want) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << i;  // -0 stays -0
    ASSERT_EQ(floatToHalf(f), h) << std::hex << i;
  }
}

TEST(Float16, EveryMidpointRoundsToEven) {
  // Between each pair of adjacent finite halves: the midpoint goes to the even one, a float just
  // either side of it goes to the nearer one. Covers subnormals and the carry into the exponent.
  for (uint16_t h = 0; h < 0x7bff; ++h) {
    const double a = halfValue(h), b = halfValue(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((a + b) / 2);
    ASSERT_EQ(static_cast<double>(mid), (a + b) / 2) << "midpoint not exact in float";
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : h;
    ASSERT_EQ(floatToHalf(mid), even) << std::hex << h;
    ASSERT_EQ(floatToHalf(-mid), even | 0x8000) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, 0.f)), h) << std::hex << h;
    ASSERT_EQ(floatToHalf(std::nextafter(mid, INFINITY)), h + 1) << std::hex << h;
  }
}

TEST(Float16, OverflowInfinityNaNAndTinyValues) {
  EXPECT_EQ(floatToHalf(65504.f), 0x7bff);
  EXPECT_EQ(floatToHalf(std::nextafter(65520.f, 0.f)), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e30f), 0x7c00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(floatToHalf(std::ldexp(1.f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.f, -25)), 0x0000);  // half of it: ties to even (0)
  EXPECT_EQ(floatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(floatToHalf(std::ldexp(1023.f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.f, -14)), 0x0400);     // smallest normal
}

TEST(Float16, RandomFloatsMatchTheModel) {
  testing::Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng.gen());
    // Half the draws land in the exponents half can represent (and just around them).
    if (i & 1) bits = (bits & 0x807fffffu) | (static_cast<uint32_t>(rng.uniformInt(98, 145)) << 23);
    const float f = floatFromBits(bits);
    const uint16_t got = floatToHalf(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(halfValue(got))) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(got, nearestHalf(f)) << std::hex << "float bits " << bits;
  }
}

TEST(Bfloat16, EveryValueRoundTripsAndRandomFloatsRoundToNearestEven) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = static_cast<uint16_t>(i);
    const float f = bf16ToFloat(b);
    ASSERT_EQ(floatBits(f), i << 16);
    if (std::isnan(f))
      ASSERT_TRUE(std::isnan(bf16ToFloat(floatToBf16(f)))) << std::hex << i;
    else
      ASSERT_EQ(floatToBf16(f), b) << std::hex << i;
  }
  testing::Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng.gen());
    const float f = floatFromBits(bits);
    const uint16_t got = floatToBf16(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16ToFloat(got))) << std::hex << bits;
      continue;
    }
    if (std::isinf(f)) {
      ASSERT_EQ(got, bits >> 16);
      continue;
    }
    // The two candidates by magnitude; past the largest finite one the next is infinity, whose
    // rounding weight is 2^128 (where the exponent would continue).
    const uint32_t lo = bits & 0xffff0000u;
    const uint32_t hi = lo + 0x10000u;
    const double x = std::fabs(static_cast<double>(f));
    const double vlo = std::fabs(static_cast<double>(floatFromBits(lo)));
    const double vhi = (hi & 0x7fffffffu) == 0x7f800000u
                           ? std::ldexp(1.0, 128)
                           : std::fabs(static_cast<double>(floatFromBits(hi)));
    const uint32_t want = x - vlo < vhi - x   ? lo
                          : vhi - x < x - vlo ? hi
                          : ((lo >> 16) & 1u) ? hi
                                              : lo;
    ASSERT_EQ(got, want >> 16) << std::hex << "float bits " << bits;
  }
}

}  // namespace
}  // namespace kiln
