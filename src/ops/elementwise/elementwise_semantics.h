// The value rules of the elementwise binary ops, shared by the CPU tactics (elementwise_cpu.cpp)
// and the CUDA kernels (elementwise_cuda.cu), so that the two backends cannot drift apart:
//   max/min propagate NaN (numpy's maximum/minimum); pow is powf and has no integer form.
//   Integer add/sub/mul wrap around in two's complement; integer div truncates toward zero,
//   x / 0 is 0 (a model must never crash the engine) and MIN / -1 wraps to MIN.
//   equal/less/greater write bool (one byte, 0 or 1) and are false when either side is NaN; equal
//   on bool treats any non-zero byte as true (and is the only op bool has).
//   prelu is a < 0 ? a * b : a (b the slope), so a NaN input passes through; no integer form.
//   fmod is C's: fmodf on floats (x fmod 0 is NaN), truncating % on integers; mod (integers only)
//   floors, so its result takes the divisor's sign (Python's %). An integer remainder by 0 is 0,
//   like division, and MIN by -1 is 0 instead of a trap.
//   Broadcasting is numpy's: trailing dims align, a missing or size-1 input dim is broadcast.
// Values are fp32 (the CUDA kernels compute fp16/bf16 in fp32 and round once on store), int32,
// int64, or bool stored as uint8_t.
#pragma once

#include <cmath>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "core/enum_names.h"
#include "core/host_device.h"
#include "kiln/ops/elementwise.h"
#include "kiln/types.h"

namespace kiln::ops::elementwise {

KILN_HOST_DEVICE constexpr bool isComparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEQUAL || op == ElementwiseOp::kLESS ||
         op == ElementwiseOp::kGREATER || op == ElementwiseOp::kGREATER_OR_EQUAL ||
         op == ElementwiseOp::kLESS_OR_EQUAL;
}

// Logical ops, defined on bool alone.
KILN_HOST_DEVICE constexpr bool isLogical(ElementwiseOp op) {
  return op == ElementwiseOp::kAND || op == ElementwiseOp::kOR || op == ElementwiseOp::kXOR;
}
// Ops defined on bool inputs: equality and the logical ops.
KILN_HOST_DEVICE constexpr bool isDefinedOnBool(ElementwiseOp op) {
  return op == ElementwiseOp::kEQUAL || isLogical(op);
}

// Ops with no floating-point form.
KILN_HOST_DEVICE constexpr bool isIntegerOnly(ElementwiseOp op) {
  return op == ElementwiseOp::kMOD;
}
// Ops with no integer form.
KILN_HOST_DEVICE constexpr bool isFloatOnly(ElementwiseOp op) {
  return op == ElementwiseOp::kPOW || op == ElementwiseOp::kPRELU;
}

// The op's name in messages and logs ("add", "prelu", ...).
inline const char* opName(ElementwiseOp op) {
  static constexpr const char* kNames[] = {
      "add",           "sub",  "mul",     "div",   "max", "min",  "pow",
      "equal",         "less", "greater", "prelu", "mod", "fmod", "greater_or_equal",
      "less_or_equal", "and",  "or",      "xor"};
  static_assert(std::size(kNames) == enumCount(ElementwiseOp{}));
  return enumName(op, kNames, "unknown op");
}

// The element type an op writes for inputs of type T: bool (as bytes) for comparisons.
template <ElementwiseOp kOp, class T>
using OutputOf = std::conditional_t<isComparison(kOp), uint8_t, T>;

template <class I>
KILN_HOST_DEVICE inline I wrapAdd(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) + static_cast<U>(b));
}
template <class I>
KILN_HOST_DEVICE inline I wrapSub(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) - static_cast<U>(b));
}
template <class I>
KILN_HOST_DEVICE inline I wrapMul(I a, I b) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(static_cast<U>(a) * static_cast<U>(b));
}
template <class I>
KILN_HOST_DEVICE inline I safeDiv(I a, I b) {
  if (b == 0) return 0;
  if (b == -1) return wrapSub(I{0}, a);  // -MIN wraps to MIN instead of trapping
  return a / b;
}
template <class I>
KILN_HOST_DEVICE inline I safeRem(I a, I b) {
  if (b == 0 || b == -1) return 0;  // -1: MIN % -1 would trap; every remainder by -1 is 0
  return a % b;
}
template <class I>
KILN_HOST_DEVICE inline I floorMod(I a, I b) {
  const I r = safeRem(a, b);
  // |r| < |b| and their signs differ, so r + b cannot overflow.
  return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<I>(r + b) : r;
}

// a kOp b for values of type T (float, int32_t, int64_t, or uint8_t for bool).
template <ElementwiseOp kOp, class T>
KILN_HOST_DEVICE inline OutputOf<kOp, T> apply(T a, T b) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  if constexpr (std::is_same_v<T, uint8_t>) {  // bool: equal and the logical ops
    static_assert(isDefinedOnBool(kOp));
    const bool x = a != 0, y = b != 0;
    if constexpr (kOp == ElementwiseOp::kAND) return x && y ? 1 : 0;
    if constexpr (kOp == ElementwiseOp::kOR) return x || y ? 1 : 0;
    if constexpr (kOp == ElementwiseOp::kXOR) return x != y ? 1 : 0;
    return x == y ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kEQUAL) {
    return a == b ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kLESS) {
    return a < b ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kGREATER) {
    return a > b ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kGREATER_OR_EQUAL) {
    return a >= b ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kLESS_OR_EQUAL) {
    return a <= b ? 1 : 0;
  } else if constexpr (kOp == ElementwiseOp::kPRELU) {
    static_assert(kFloat, "prelu has no integer form");
    return a < 0 ? a * b : a;
  } else if constexpr (kOp == ElementwiseOp::kADD) {
    if constexpr (kFloat)
      return a + b;
    else
      return wrapAdd(a, b);
  } else if constexpr (kOp == ElementwiseOp::kSUB) {
    if constexpr (kFloat)
      return a - b;
    else
      return wrapSub(a, b);
  } else if constexpr (kOp == ElementwiseOp::kMUL) {
    if constexpr (kFloat)
      return a * b;
    else
      return wrapMul(a, b);
  } else if constexpr (kOp == ElementwiseOp::kDIV) {
    if constexpr (kFloat)
      return a / b;
    else
      return safeDiv(a, b);
  } else if constexpr (kOp == ElementwiseOp::kMAX) {
    return (a > b || a != a) ? a : b;  // a NaN in either input wins
  } else if constexpr (kOp == ElementwiseOp::kMIN) {
    return (a < b || a != a) ? a : b;
  } else if constexpr (kOp == ElementwiseOp::kFMOD) {
    if constexpr (kFloat)
      return fmodf(a, b);
    else
      return safeRem(a, b);
  } else if constexpr (kOp == ElementwiseOp::kMOD) {
    static_assert(!kFloat, "mod is defined on integers only (floats use fmod)");
    return floorMod(a, b);
  } else {
    static_assert(kOp == ElementwiseOp::kPOW && std::is_same_v<T, float>,
                  "pow is defined on fp32 only");
    return powf(a, b);
  }
}

// a op b for an arithmetic op chosen at run time, V float (fp32; the CUDA kernels compute fp16 and
// bf16 in fp32) or int32/int64: no pow or prelu on integers and no mod on floats (0 for those and
// for comparisons or logical ops, which callers decline before they get here).
template <class V>
KILN_HOST_DEVICE inline V applyArithmetic(ElementwiseOp op, V a, V b) {
  switch (op) {
    case ElementwiseOp::kADD:
      return apply<ElementwiseOp::kADD>(a, b);
    case ElementwiseOp::kSUB:
      return apply<ElementwiseOp::kSUB>(a, b);
    case ElementwiseOp::kMUL:
      return apply<ElementwiseOp::kMUL>(a, b);
    case ElementwiseOp::kDIV:
      return apply<ElementwiseOp::kDIV>(a, b);
    case ElementwiseOp::kMAX:
      return apply<ElementwiseOp::kMAX>(a, b);
    case ElementwiseOp::kMIN:
      return apply<ElementwiseOp::kMIN>(a, b);
    case ElementwiseOp::kPOW:
      if constexpr (std::is_floating_point_v<V>) return apply<ElementwiseOp::kPOW>(a, b);
      break;
    case ElementwiseOp::kPRELU:
      if constexpr (std::is_floating_point_v<V>) return apply<ElementwiseOp::kPRELU>(a, b);
      break;
    case ElementwiseOp::kFMOD:
      return apply<ElementwiseOp::kFMOD>(a, b);
    case ElementwiseOp::kMOD:
      if constexpr (!std::is_floating_point_v<V>) return apply<ElementwiseOp::kMOD>(a, b);
      break;
    default:
      break;
  }
  return 0;
}

// numpy broadcasting: strides[i], for each of the output's `outRank` dims, is the stride (in
// elements) with which that dim walks an input of dims `in` whose own per-dim strides are `own`:
// the input's trailing dims align with the output's (inference checked that outRank >=
// in.nbDims), and a missing or size-1 input dim is broadcast (stride 0).
KILN_HOST_DEVICE inline void broadcastStrides(const Dims& in, const int64_t* own, int32_t outRank,
                                              int64_t* strides) {
  const int32_t shift = outRank - in.nbDims;
  for (int32_t i = 0; i < outRank; ++i) {
    const int32_t j = i - shift;
    strides[i] = (j < 0 || in.d[j] == 1) ? 0 : own[j];
  }
}

}  // namespace kiln::ops::elementwise
