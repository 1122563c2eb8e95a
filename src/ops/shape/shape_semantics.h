// Which dims the Shape layer gives, for its shape rule and both backends' kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kiln/ops/shape.h"

namespace kiln::ops::shape_of {

// The first dim given and one past the last, for an input of `rank` dims.
inline int32_t first(const ShapeParams& p, int32_t rank) { return std::clamp(p.start, 0, rank); }
inline int32_t last(const ShapeParams& p, int32_t rank) {
  return std::max(first(p, rank), std::clamp(p.end, 0, rank));
}

}  // namespace kiln::ops::shape_of
