// Parameters of the built-in Expand layer (src/ops/expand/).
#pragma once

#include "kiln/types.h"

namespace kiln {

// Broadcasts the input to `shape` in numpy's rules (ONNX Expand: the output is the broadcast of
// the input's shape and `shape`).
struct ExpandParams {
  Dims shape;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("shape", p.shape);
  }
};

}  // namespace kiln
