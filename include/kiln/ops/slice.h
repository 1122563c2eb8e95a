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
// stops m elements before the end instead (x[:, :-1]: m = 1). With step[i] < 0, outputDims.d[i]
// = -1 reads down to element 0 (x.flip(i), x[::-1]).
// startFromEnd[i] = m > 0 makes the start m elements before the end, max(0, dim - m), whatever
// the input's dim is at run time (x[-2:], hidden[:, -1:] of a decoder); starts.d[i] is unused then.
// With a second input (its dims source, whose data is never read), outputDimsOf[i] = k + 1 makes
// output dim i that input's dim k, whatever it is at run time (x[:, :sequence] of a buffer longer
// than the sequence: GPT-2's causal mask, BERT's position ids); 0 keeps outputDims.d[i].
struct SliceParams {
  Dims starts;
  Dims steps;                              // non-zero, may be negative
  Dims outputDims;                         // -1: to the end of the axis (step > 0)
  int64_t beforeEnd[Dims::kMaxDims] = {};  // with outputDims.d[i] = -1: stop this many early
  int32_t outputDimsOf[Dims::kMaxDims] = {};
  int64_t startFromEnd[Dims::kMaxDims] = {};  // m > 0: start at max(0, dim - m)

  // The start on an axis of `dim` elements: `start`, or m = fromEnd > 0 elements before the end
  // (ONNX clamps a start below -dim to 0, as Python does: x[-5:] of 3 elements is x[0:]).
  static constexpr int64_t startOf(int64_t start, int64_t fromEnd, int64_t dim) {
    return fromEnd > 0 ? (dim > fromEnd ? dim - fromEnd : 0) : start;
  }
  int64_t startOn(int32_t axis, int64_t dim) const {
    return startOf(starts.d[axis], startFromEnd[axis], dim);
  }

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("starts", p.starts);
    v("steps", p.steps);
    v("outputDims", p.outputDims);
    v("beforeEnd", p.beforeEnd);
    v("outputDimsOf", p.outputDimsOf);
    v("startFromEnd", p.startFromEnd);
  }
};

}  // namespace kiln
