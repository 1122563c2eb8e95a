// Parameters of the built-in Padding layer (ONNX Pad; src/ops/padding/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

enum class PaddingMode : int32_t { kCONSTANT = 0, kREFLECT = 1, kEDGE = 2 };
constexpr int32_t enumCount(PaddingMode) { return 3; }

// Pads every axis: before[i] elements in front of axis i and after[i] behind (both >= 0).
struct PaddingParams {
  PaddingMode mode = PaddingMode::kCONSTANT;
  float value = 0.f;  // kCONSTANT
  int64_t before[Dims::kMaxDims] = {};
  int64_t after[Dims::kMaxDims] = {};

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("mode", p.mode);
    v("value", p.value);
    v("before", p.before);
    v("after", p.after);
  }
};

}  // namespace kiln
