// Parameters of the built-in Trilu layer (ONNX Trilu: the upper or lower triangle of the last two
// dims, the rest zeroed; the causal masks of decoders; src/ops/trilu/).
#pragma once

#include <cstdint>

namespace kiln {

// Input x [..., rows, cols] of any type, rank >= 2; output the same. Element (i, j) of each
// matrix is kept when j - i >= k (upper) or j - i <= k (lower), else it is zero. k = 0 is the
// main diagonal, k > 0 above it, k < 0 below.
struct TriluParams {
  bool upper = true;
  int64_t k = 0;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("upper", p.upper);
    v("k", p.k);
  }
};

}  // namespace kiln
