// Parameters of the built-in Shuffle layer (transpose / reshape / transpose; src/ops/shuffle/).
#pragma once

#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// TensorRT's shuffle: an optional transpose, an optional reshape, an optional second transpose.
// Reshape dims: 0 copies the input dim at that index, -1 is inferred (at most one).
// With a second input (INetworkDefinition::addShuffleWithDimsOf), reshape dim i may instead be a
// dim of that input: reshapeDimsOf[i] = k + 1 takes its dim k, whatever it is at run time (TensorRT
// takes a shape tensor there; this is the part of it that dynamic exports need: a reshape to
// [batch, sequence, heads, ...] where two dims vary). 0: dim i is as reshapeDims says. The second
// input's data is never read.
struct ShuffleParams {
  bool hasFirstTranspose = false;
  int32_t firstTranspose[Dims::kMaxDims] = {};
  bool hasReshape = false;
  Dims reshapeDims;
  int32_t reshapeDimsOf[Dims::kMaxDims] = {};
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
    v("reshapeDimsOf", p.reshapeDimsOf);
    v("hasSecondTranspose", p.hasSecondTranspose);
    v("secondTranspose", p.secondTranspose);
  }
};

}  // namespace kiln
