// Small checks shared by the shape inference of the light built-in layers (elementwise,
// activation, softmax, concatenation, shuffle, reduce, reformat). Internal to src/core.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/graph.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::light {

// "[2,3,4]" (or "[]" for a scalar).
inline std::string dimsString(const Dims& dims) {
  std::string s = "[";
  const int32_t n = dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims ? 0 : dims.nbDims;
  for (int32_t i = 0; i < n; ++i) {
    if (i) s += ",";
    s += std::to_string(dims.d[i]);
  }
  return s + "]";
}

inline Status checkInputCount(const char* layer, const std::vector<TensorShape>& in,
                              size_t expected) {
  if (in.size() != expected)
    return invalidArgument(std::string(layer) + ": expects " + std::to_string(expected) +
                           " input(s), got " + std::to_string(in.size()));
  return Status::ok();
}

// Every tensor a kernel may touch must have a valid type, rank in [0, 8], non-negative dims and a
// byte size that fits in int64 (so that no later size computation can overflow).
inline Status checkShape(const char* layer, const TensorShape& s, size_t index) {
  const std::string where = std::string(layer) + ": input " + std::to_string(index);
  if (dataTypeSize(s.type) == 0)
    return invalidArgument(where + " has invalid data type " +
                           std::to_string(static_cast<int32_t>(s.type)));
  if (s.dims.nbDims < 0 || s.dims.nbDims > Dims::kMaxDims)
    return invalidArgument(where + " has rank " + std::to_string(s.dims.nbDims) +
                           ", outside [0, 8]");
  for (int32_t i = 0; i < s.dims.nbDims; ++i)
    if (s.dims.d[i] < 0)
      return invalidArgument(where + " has negative dim " + std::to_string(i) + " in " +
                             dimsString(s.dims));
  const int64_t v = volume(s.dims);
  if (v < 0 || v > std::numeric_limits<int64_t>::max() / 8)
    return invalidArgument(where + " dims " + dimsString(s.dims) + " are too large");
  return Status::ok();
}

inline Status checkAllShapes(const char* layer, const std::vector<TensorShape>& in) {
  for (size_t i = 0; i < in.size(); ++i) KILN_RETURN_IF_ERROR(checkShape(layer, in[i], i));
  return Status::ok();
}

// The output of a shape computation must obey the same limits as the inputs.
inline Status checkOutputDims(const char* layer, const Dims& dims) {
  const int64_t v = volume(dims);
  if (v < 0 || v > std::numeric_limits<int64_t>::max() / 8)
    return invalidArgument(std::string(layer) + ": output dims " + dimsString(dims) +
                           " are too large");
  return Status::ok();
}

inline bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

// Maps a possibly negative axis into [0, rank), or fails naming the layer.
inline Status normalizeAxis(const char* layer, int32_t axis, int32_t rank, int32_t* out) {
  if (axis < -rank || axis >= rank)
    return invalidArgument(std::string(layer) + ": axis " + std::to_string(axis) + " is outside [" +
                           std::to_string(-rank) + ", " + std::to_string(rank) + ") for rank " +
                           std::to_string(rank));
  *out = axis < 0 ? axis + rank : axis;
  return Status::ok();
}

// True when perm[0..rank) holds each of 0..rank-1 exactly once; else says why in *why.
inline bool isPermutation(const int32_t* perm, int32_t rank, std::string* why) {
  bool seen[Dims::kMaxDims] = {};
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t p = perm[i];
    if (p < 0 || p >= rank) {
      *why = "entry " + std::to_string(i) + " is " + std::to_string(p) + ", outside [0, " +
             std::to_string(rank) + ")";
      return false;
    }
    if (seen[p]) {
      *why = "axis " + std::to_string(p) + " appears twice";
      return false;
    }
    seen[p] = true;
  }
  return true;
}

}  // namespace kiln::light
