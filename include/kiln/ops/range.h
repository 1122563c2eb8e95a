// Parameters of the built-in Range layer (ONNX Range whose length is only known at run time: the
// position ids torch.arange(sequence) exports; src/ops/range/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// Output: one dim of `length` elements of `type` (kFLOAT, kINT32 or kINT64), element i being
// start + i * delta (computed in double, then converted: exact for integers, since every value
// must lie within +-2^53). With an input (its dims source, whose data is never read),
// lengthOf = k + 1 makes the length that input's dim k, whatever it is at run time, and `length`
// is ignored; 0 keeps `length`. ONNX folds a Range on constants at parse time; this layer is what
// a Range whose limit follows an input's shape becomes.
struct RangeParams {
  DataType type = DataType::kINT64;
  double start = 0;
  double delta = 1;
  int64_t length = 0;
  int32_t lengthOf = 0;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("type", p.type);
    v("start", p.start);
    v("delta", p.delta);
    v("length", p.length);
    v("lengthOf", p.lengthOf);
  }
};

}  // namespace kiln
