// Padding's rules, shared by its CPU and CUDA kernels (padding_cpu.cpp, padding_cuda.cu): which
// input element an output coordinate reads in each mode, and the constant value's bits in the
// tensor's type.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "core/host_device.h"
#include "kiln/float16.h"
#include "kiln/ops/padding.h"
#include "kiln/types.h"

namespace kiln::ops::padding {

// Input index for output coordinate j of an axis with `before` pads and n input elements, or -1
// where the output is the constant value.
KILN_HOST_DEVICE inline int64_t source(PaddingMode mode, int64_t j, int64_t before, int64_t n) {
  const int64_t i = j - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PaddingMode::kREFLECT:  // inference keeps the pads below n, so one reflection lands inside
      return i < 0 ? -i : 2 * (n - 1) - i;
    case PaddingMode::kEDGE:
      return i < 0 ? 0 : n - 1;
    default:
      return -1;
  }
}

// An integer cast that saturates (and maps NaN to 0) instead of overflowing.
template <class I>
KILN_HOST_DEVICE inline I saturate(float v) {
  if (v != v) return 0;
  if (v <= static_cast<float>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<float>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);  // truncates toward zero, as a C cast does
}

// The constant value in the tensor's type, as the low bytes of a uint64; fp16 and bf16 round to
// nearest even (kiln/float16.h). Host code: both backends call it when they make the kernel.
inline uint64_t fillBits(float value, DataType type) {
  uint64_t bits = 0;
  auto put = [&](auto v) { std::memcpy(&bits, &v, sizeof v); };
  switch (type) {
    case DataType::kFLOAT:
      put(value);
      break;
    case DataType::kHALF:
      put(floatToHalf(value));
      break;
    case DataType::kBF16:
      put(floatToBf16(value));
      break;
    case DataType::kINT8:
      put(saturate<int8_t>(value));
      break;
    case DataType::kINT32:
      put(saturate<int32_t>(value));
      break;
    case DataType::kINT64:
      put(saturate<int64_t>(value));
      break;
    case DataType::kBOOL:
      put(static_cast<uint8_t>(value != 0.f));
      break;
  }
  return bits;
}

}  // namespace kiln::ops::padding
