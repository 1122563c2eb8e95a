// Parameters of the built-in Shuffle layer (transpose / reshape / transpose; src/ops/shuffle/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// TensorRT's shuffle: an optional transpose, an optional reshape, an optional second transpose.
// Reshape dims: 0 copies the input dim at that index, -1 is inferred (at most one).
struct ShuffleParams {
  bool hasFirstTranspose = false;
  int32_t firstTranspose[Dims::kMaxDims] = {};
  bool hasReshape = false;
  Dims reshapeDims;
  bool hasSecondTranspose = false;
  int32_t secondTranspose[Dims::kMaxDims] = {};

  // All kMaxDims entries of each permutation are fields, used or not, so that the plan round trip
  // is exact whatever the unused tail holds.
  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("hasFirstTranspose", p.hasFirstTranspose);
    v("firstTranspose", p.firstTranspose);
    v("hasReshape", p.hasReshape);
    v("reshapeDims", p.reshapeDims);
    v("hasSecondTranspose", p.hasSecondTranspose);
    v("secondTranspose", p.secondTranspose);
  }
};

}  // namespace kiln
