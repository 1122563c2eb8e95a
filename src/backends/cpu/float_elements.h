// How the CPU backend stores each float type and converts it to and from FP32, for kernels that
// take fp16 and bf16 as they are (reformat, layer normalization): FloatElement<kHALF>::toFloat.
#pragma once

#include <cstdint>

#include "kiln/float16.h"
#include "kiln/types.h"

namespace kiln::cpu {

template <DataType T>
struct FloatElement;
template <>
struct FloatElement<DataType::kFLOAT> {
  using S = float;
  static float toFloat(S v) { return v; }
  static S fromFloat(float f) { return f; }
};
template <>
struct FloatElement<DataType::kHALF> {
  using S = uint16_t;
  static float toFloat(S v) { return halfToFloat(v); }
  static S fromFloat(float f) { return floatToHalf(f); }
};
template <>
struct FloatElement<DataType::kBF16> {
  using S = uint16_t;
  static float toFloat(S v) { return bf16ToFloat(v); }
  static S fromFloat(float f) { return floatToBf16(f); }
};

}  // namespace kiln::cpu
