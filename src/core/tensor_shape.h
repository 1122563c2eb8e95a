// Shape and element type of a tensor, as shape rules see it.
#pragma once

#include <string>

#include "kiln/types.h"

namespace kiln {

struct TensorShape {
  Dims dims;
  DataType type = DataType::kFLOAT;
};

// "[2,3,4]" (or "[]" for a scalar), for messages; a rank outside [0, 8] prints as "[]".
inline std::string dimsString(const Dims& dims) {
  std::string s = "[";
  const int32_t n = dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims ? 0 : dims.nbDims;
  for (int32_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += std::to_string(dims.d[i]);
  }
  return s + "]";
}

}  // namespace kiln
