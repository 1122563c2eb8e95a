// Parameters of the built-in Slice layer (src/ops/slice/).
#pragma once

#include "kiln/types.h"

namespace kiln {

// A strided slice: on axis i, output element j reads input element start[i] + j * step[i], for
// j < outputDims.d[i]. Every element read must be inside the input. outputDims.d[i] = -1 (with
// step[i] > 0) reads to the end of the axis: as many elements as fit after start[i], whatever the
// input's dim is at run time (ONNX's INT64_MAX ends, Python's x[:, 2:]); that keeps a slice valid
// over an optimization profile's range of shapes.
struct SliceParams {
  Dims starts;
  Dims steps;       // non-zero, may be negative
  Dims outputDims;  // -1: to the end of the axis (step > 0)

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("starts", p.starts);
    v("steps", p.steps);
    v("outputDims", p.outputDims);
  }
};

}  // namespace kiln
