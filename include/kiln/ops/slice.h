// Parameters of the built-in Slice layer (src/ops/slice/).
#pragma once

#include "kiln/types.h"

namespace kiln {

// A strided slice with everything resolved: on axis i, output element j reads input element
// start[i] + j * step[i], for j < outputDims.d[i]. Every element read must be inside the input.
struct SliceParams {
  Dims starts;
  Dims steps;  // non-zero, may be negative
  Dims outputDims;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("starts", p.starts);
    v("steps", p.steps);
    v("outputDims", p.outputDims);
  }
};

}  // namespace kiln
