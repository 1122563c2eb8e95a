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

// "2x3x224x224" ("a scalar" for rank 0; -1 where a dim is dynamic): the command line's --shapes
// spelling, for messages about input shapes and profiles.
inline std::string dimsStringTimes(const Dims& dims) {
  if (dims.nbDims == 0) return "a scalar";
  std::string s;
  for (int32_t k = 0; k < dims.nbDims && k < Dims::kMaxDims; ++k)
    s += (k ? "x" : "") + std::to_string(dims.d[k]);
  return s;
}

// True when some dim is dynamic (-1), as network inputs declare them.
inline bool hasDynamicDim(const Dims& dims) {
  for (int32_t k = 0; k < dims.nbDims && k < Dims::kMaxDims; ++k)
    if (dims.d[k] < 0) return true;
  return false;
}

}  // namespace kiln
