// Parameters of the built-in Expand layer (src/ops/expand/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// Broadcasts the input to `shape` in numpy's rules (ONNX Expand: the output is the broadcast of
// the input's shape and `shape`). With a second input (its dims source, whose data is never
// read), shapeDimsOf[i] = k + 1 makes shape dim i that input's dim k, whatever it is at run time
// (ConstantOfShape([sequence, sequence]) of a causal mask); 0 keeps shape.d[i].
struct ExpandParams {
  Dims shape;
  int32_t shapeDimsOf[Dims::kMaxDims] = {};

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("shape", p.shape);
    v("shapeDimsOf", p.shapeDimsOf);
  }
};

}  // namespace kiln
