// Parameters of the built-in Reduce layer (src/ops/reduce/).
#pragma once

#include <cstdint>

namespace kiln {

enum class ReduceOp : int32_t {
  kSUM = 0,
  kMEAN = 1,
  kMAX = 2,
  kARGMAX = 3,  // exactly one axis; output kINT64, the first index of the maximum
};
constexpr int32_t enumCount(ReduceOp) { return 4; }

struct ReduceParams {
  ReduceOp op = ReduceOp::kSUM;
  uint32_t axesMask = 0;  // bit i set: reduce dim i
  bool keepDims = true;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("op", p.op);
    v("axesMask", p.axesMask);
    v("keepDims", p.keepDims);
  }
};

}  // namespace kiln
