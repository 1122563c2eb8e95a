// Conversions between float32 and the 16-bit float types kiln supports (IEEE half, bfloat16).
// Header-only so that plugins, which compile against the public headers alone, can use them.
#pragma once

#include <cstdint>
#include <cstring>

namespace kiln {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float32 -> IEEE half, round to nearest even; overflow gives infinity, NaN stays NaN.
inline uint16_t floatToHalf(float f) {
  const uint32_t x = floatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520
  if (absx < 0x38800000u) {  // result is subnormal or zero: scale by 2^24 and round via float
    const float scaled = floatFromBits(absx) * 16777216.0f;  // exact value in half-subnormal units
    // Round half to even on an integer in [0, 1024].
    uint32_t i = static_cast<uint32_t>(scaled);
    const float rem = scaled - static_cast<float>(i);
    if (rem > 0.5f || (rem == 0.5f && (i & 1u))) ++i;
    return static_cast<uint16_t>(sign | i);
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits to nearest even.
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t half = (exp << 10) | (mant >> 13);
  const uint32_t dropped = mant & 0x1fffu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;  // may carry into exp
  return static_cast<uint16_t>(sign | half);
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return floatFromBits(sign | 0x7f800000u | (mant << 13));
  return floatFromBits(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// float32 -> bfloat16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t floatToBf16(float f) {
  const uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float bf16ToFloat(uint16_t b) { return floatFromBits(static_cast<uint32_t>(b) << 16); }

}  // namespace kiln
