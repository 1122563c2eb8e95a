// Parameters of the built-in Shape layer (ONNX Shape read as data at run time: the sequence
// length of transformers' padding masks; src/ops/shape/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// Output: the input's dims start .. end - 1 as int64, one dim, end clamped to the input's rank
// (0 <= start). The input's data is never read. ONNX folds a Shape at parse time; this layer is
// what a Shape becomes when its values follow a dynamic input and are read as data.
struct ShapeParams {
  int32_t start = 0;
  int32_t end = Dims::kMaxDims;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("start", p.start);
    v("end", p.end);
  }
};

}  // namespace kiln
