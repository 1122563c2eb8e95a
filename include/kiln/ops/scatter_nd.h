// Parameters of the built-in ScatterND layer (ONNX ScatterND, opsets 11 to 18;
// src/ops/scatter_nd/).
#pragma once

#include <cstdint>

namespace kiln {

// How an update combines with the element it lands on (ONNX's `reduction`: opset 16 added add
// and mul, 18 max and min).
enum class ScatterReduction : int32_t {
  kNONE = 0,  // the update replaces the element
  kADD = 1,
  kMUL = 2,
  kMAX = 3,
  kMIN = 4,
};
constexpr int32_t enumCount(ScatterReduction) { return 5; }

// Inputs Data (any type), Indices (int32 or int64, rank q >= 1, its last dim k in [1, rank(Data)])
// and Updates (Data's type, of shape Indices.shape[:-1] + Data.shape[k:]); output: a copy of Data
// in which each index tuple (a row of Indices' last axis) addresses the slice Data[i0, ..., ik-1]
// of shape Data.shape[k:], set to (or combined with) the matching slice of Updates. Tuples apply
// in order, on every backend, so a repeated tuple's last update wins with kNONE (ONNX leaves that
// order undefined) and reductions combine in tuple order. A negative index counts from the end;
// one outside [-d, d) fails the run on the CPU; on CUDA its tuple is skipped and the workspace's
// error flag set (as Gather does: the GPU cannot fail an enqueue without synchronising).
// Reductions need an arithmetic type (fp32, int32, int64; fp16/bf16 compute in fp32); kNONE moves
// the bytes of any type.
struct ScatterNDParams {
  ScatterReduction reduction = ScatterReduction::kNONE;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("reduction", p.reduction);
  }
};

}  // namespace kiln
