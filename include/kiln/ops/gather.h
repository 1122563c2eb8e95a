// Parameters of the built-in Gather layer (src/ops/gather/).
#pragma once

#include <cstdint>

namespace kiln {

// ONNX Gather: inputs data, indices (kINT32 or kINT64; negative indices count from the end;
// an index out of range is an error at run time, never an out-of-bounds read).
struct GatherParams {
  int32_t axis = 0;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("axis", p.axis);
  }
};

}  // namespace kiln
