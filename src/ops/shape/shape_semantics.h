// Which dims the Shape layer gives, for its shape rule and both backends' kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/ops/shape.h"
#include "kiln/types.h"

namespace kiln::ops::shape_of {

// The first dim given and one past the last, for an input of `rank` dims.
inline int32_t first(const ShapeParams& p, int32_t rank) { return std::clamp(p.start, 0, rank); }
inline int32_t last(const ShapeParams& p, int32_t rank) {
  return std::max(first(p, rank), std::clamp(p.end, 0, rank));
}

// The values the layer writes for an input of dims `in`: its dims first .. last - 1.
inline Dims valuesOf(const ShapeParams& p, const Dims& in) {
  Dims values;
  values.nbDims = 0;
  for (int32_t k = first(p, in.nbDims); k < last(p, in.nbDims); ++k)
    values.d[values.nbDims++] = in.d[k];
  return values;
}

}  // namespace kiln::ops::shape_of
