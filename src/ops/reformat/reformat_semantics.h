// Reformat's value rules, shared by its CPU and CUDA kernels (reformat_cpu.cpp,
// reformat_cuda.cu). Which type pairs exist is decided by ops::Reformat::infer; a value converts
// as a plain cast would, made total:
//   fp32/fp16/bf16 among themselves   round to nearest even
//   float -> integer                  truncate toward zero, saturate, NaN -> 0
//   integer -> narrower integer       saturate
//   integer -> fp32                   round to nearest
//   bool -> anything                  0 or 1 (any non-zero byte is true)
//   anything -> bool                  value != 0 (NaN is true)
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/host_device.h"

namespace kiln::ops::reformat {

enum class Kind { kFloat, kInt, kBool };

template <class I>
KILN_HOST_DEVICE inline I saturateFromFloat(float f) {
  if (f != f) return 0;
  const double d = f;
  // Both bounds are powers of two, exact in double; inside them the truncation is defined.
  const double hi = -static_cast<double>(std::numeric_limits<I>::min());  // max + 1
  if (d >= hi) return std::numeric_limits<I>::max();
  if (d <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(d);
}

template <class I>
KILN_HOST_DEVICE inline I saturateFromInt(int64_t v) {
  if (v > static_cast<int64_t>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v < static_cast<int64_t>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// One element converted by the rules above. Src and Dst describe a storage type, each backend
// with its own: S (the C++ type), kKind, and for kFloat the static functions float toFloat(S)
// and S fromFloat(float) (fp16 and bf16 round to nearest even on both backends).
template <class Src, class Dst>
KILN_HOST_DEVICE inline typename Dst::S convert(typename Src::S v) {
  if constexpr (std::is_same_v<Src, Dst>) {
    return v;
  } else if constexpr (Dst::kKind == Kind::kFloat) {
    float f;
    if constexpr (Src::kKind == Kind::kFloat)
      f = Src::toFloat(v);
    else if constexpr (Src::kKind == Kind::kInt)
      f = static_cast<float>(v);
    else
      f = v ? 1.f : 0.f;
    return Dst::fromFloat(f);
  } else if constexpr (Dst::kKind == Kind::kBool) {
    if constexpr (Src::kKind == Kind::kFloat)
      return Src::toFloat(v) != 0.f ? 1 : 0;
    else
      return v != 0 ? 1 : 0;
  } else {
    using D = typename Dst::S;
    if constexpr (Src::kKind == Kind::kFloat)
      return saturateFromFloat<D>(Src::toFloat(v));
    else if constexpr (Src::kKind == Kind::kInt)
      return saturateFromInt<D>(static_cast<int64_t>(v));
    else
      return v != 0 ? 1 : 0;
  }
}

}  // namespace kiln::ops::reformat
