// Parameters of the built-in Elementwise layer (src/ops/elementwise/).
#pragma once

#include <cstdint>

namespace kiln {

enum class ElementwiseOp : int32_t {
  kADD = 0,
  kSUB = 1,
  kMUL = 2,
  kDIV = 3,
  kMAX = 4,
  kMIN = 5,
  kPOW = 6,
  kEQUAL = 7,  // comparisons give kBOOL
  kLESS = 8,
  kGREATER = 9,
  kPRELU = 10,  // a < 0 ? a * b : a (b is the slope, broadcast)
  kMOD = 11,    // integers only: the remainder with the divisor's sign (Python's %; ONNX Mod)
  kFMOD = 12,   // the remainder with the dividend's sign (C's fmod and %; ONNX Mod fmod=1)
  kGREATER_OR_EQUAL = 13,  // comparisons as kEQUAL..kGREATER: false where either input is NaN
  kLESS_OR_EQUAL = 14,
  kAND = 15,  // logical ops: kBOOL in and out
  kOR = 16,
  kXOR = 17,
};
constexpr int32_t enumCount(ElementwiseOp) { return 18; }

// Two inputs of equal rank or broadcastable in numpy's rules (trailing dims aligned, size 1
// stretches).
struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::kADD;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("op", p.op);
  }
};

}  // namespace kiln
