// Parameters of the built-in Tile layer (src/ops/tile/).
#pragma once

#include "kiln/types.h"

namespace kiln {

// Repeats the input repeats.d[i] times along axis i (ONNX Tile).
struct TileParams {
  Dims repeats;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("repeats", p.repeats);
  }
};

}  // namespace kiln
