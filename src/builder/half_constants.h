// FP32 constants converted to FP16 at build time: finite values beyond FP16's range become
// +-65504, not +-inf, as TensorRT clamps weights. The -3.4e38 that transformers writes for a
// masked position (torch.finfo(float32).min) must stay a large finite negative in an FP16 plan,
// or a fully masked row's softmax (a left-padded sequence's padding) is NaN where PyTorch's is
// uniform. Infinities and NaN stay what they are.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace kiln {

// `half` holds `n` values converted from `source` element for element (round to nearest); each
// that overflowed to an infinity from a finite source becomes the largest half of its sign.
// Returns how many did.
inline size_t clampHalfOverflows(const float* source, uint16_t* half, size_t n) {
  constexpr uint16_t kInfinity = 0x7c00, kLargest = 0x7bff, kSign = 0x8000;
  size_t clamped = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!std::isfinite(source[k]) || (half[k] & ~kSign) != kInfinity) continue;
    half[k] = uint16_t((half[k] & kSign) | kLargest);
    ++clamped;
  }
  return clamped;
}

}  // namespace kiln
