// Parameters of the built-in Slice layer (src/ops/slice/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// A strided slice: on axis i, output element j reads input element start[i] + j * step[i], for
// j < outputDims.d[i]. Every element read must be inside the input. outputDims.d[i] = -1 (with
// step[i] > 0) reads to the end of the axis: as many elements as fit after start[i], whatever the
// input's dim is at run time (ONNX's INT64_MAX ends, Python's x[:, 2:]); that keeps a slice valid
// over an optimization profile's range of shapes. beforeEnd[i] = m > 0 (with outputDims.d[i] = -1)
// stops m elements before the end instead (x[:, :-1]: m = 1).
// With a second input (its dims source, whose data is never read), outputDimsOf[i] = k + 1 makes
// output dim i that input's dim k, whatever it is at run time (x[:, :sequence] of a buffer longer
// than the sequence: GPT-2's causal mask, BERT's position ids); 0 keeps outputDims.d[i].
struct SliceParams {
  Dims starts;
  Dims steps;                              // non-zero, may be negative
  Dims outputDims;                         // -1: to the end of the axis (step > 0)
  int64_t beforeEnd[Dims::kMaxDims] = {};  // with outputDims.d[i] = -1: stop this many early
  int32_t outputDimsOf[Dims::kMaxDims] = {};

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("starts", p.starts);
    v("steps", p.steps);
    v("outputDims", p.outputDims);
    v("beforeEnd", p.beforeEnd);
    v("outputDimsOf", p.outputDimsOf);
  }
};

}  // namespace kiln
