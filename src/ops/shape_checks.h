// Small checks every op's shape rule uses (src/ops/*/*_shape.cpp). A shape rule is the one place
// that decides whether a layer is well formed: the network API, the builder, every backend's
// tactics and the plan reader all ask it, so these checks also guard kernels against corrupt plans.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor_shape.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::shape {

inline std::string str(int64_t v) { return std::to_string(v); }

// Largest single dim any output may have, so that dim arithmetic cannot overflow int64.
constexpr int64_t kMaxDim = int64_t{1} << 60;

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

// Between `min` and `max` inputs (max -1: any number), each checked by checkShape: what every
// op's shape rule may assume. `names` describes the inputs in the message ("x, W[, bias]").
inline Status checkInputs(const char* layer, int32_t min, int32_t max, const char* names,
                          const std::vector<TensorShape>& in) {
  const auto n = static_cast<int64_t>(in.size());
  if (n < min || (max >= 0 && n > max)) {
    const std::string count = max < 0          ? "at least " + std::to_string(min)
                              : min == max     ? std::to_string(min)
                              : max == min + 1 ? std::to_string(min) + " or " + std::to_string(max)
                                               : std::to_string(min) + " to " + std::to_string(max);
    return invalidArgument(std::string(layer) + ": expects " + count +
                           (max == 1 && min == 1 ? " input (" : " inputs (") + names + "), got " +
                           std::to_string(n));
  }
  return checkAllShapes(layer, in);
}
// The output of a shape computation must obey the same limits as the inputs.
inline Status checkOutputDims(const char* layer, const Dims& dims) {
  const int64_t v = volume(dims);
  if (v < 0 || v > std::numeric_limits<int64_t>::max() / 8)
    return invalidArgument(std::string(layer) + ": output dims " + dimsString(dims) +
                           " are too large");
  return Status::ok();
}

// The one output of most ops: its dims checked as above, then stored with `type`.
inline Status setOutput(const char* layer, const Dims& dims, DataType type,
                        std::vector<TensorShape>& out) {
  KILN_RETURN_IF_ERROR(checkOutputDims(layer, dims));
  out.assign(1, TensorShape{dims, type});
  return Status::ok();
}

// A normalisation's epsilon: finite and >= 0 (NaN or a negative one would make every output NaN).
inline Status checkEpsilon(const char* layer, float epsilon) {
  if (!(epsilon >= 0.f) || epsilon == std::numeric_limits<float>::infinity())
    return invalidArgument(std::string(layer) + ": epsilon " + std::to_string(epsilon) +
                           " must be finite and >= 0");
  return Status::ok();
}

// A row normalisation's parameter (LayerNormalization's Scale and B, RMSNormalization's Scale) must
// broadcast unidirectionally to the normalised dims x.d[axis:]: trailing dims aligned, each 1 or
// the row's extent; dims before the row's (a higher rank) only 1. `what` names it ("Scale (input
// 1)"); `axis` is in [0, rank).
Status checkRowParam(const char* layer, const Dims& x, int32_t axis, const Dims& p,
                     const char* what);

inline Status checkFloatInput(const char* layer, const TensorShape& s, size_t index) {
  if (!isFloatType(s.type))
    return invalidArgument(std::string(layer) + ": input " + std::to_string(index) + " is " +
                           dataTypeName(s.type) + "; only fp32, fp16 and bf16 are supported");
  return Status::ok();
}

inline Status checkFloatInputs(const char* layer, const std::vector<TensorShape>& in) {
  for (size_t i = 0; i < in.size(); ++i) KILN_RETURN_IF_ERROR(checkFloatInput(layer, in[i], i));
  return Status::ok();
}

inline Status checkRank4(const char* layer, const char* what, const Dims& d) {
  if (d.nbDims != 4)
    return invalidArgument(std::string(layer) + ": " + what + " must be rank 4, got rank " +
                           str(d.nbDims) + " " + dimsString(d));
  return Status::ok();
}

// A parameter that needs one value per axis of the input (starts, repeats, ...).
inline Status checkParamRank(const char* layer, const char* what, const Dims& d, int32_t rank) {
  if (d.nbDims != rank)
    return invalidArgument(std::string(layer) + ": " + what + " " + dimsString(d) + " have rank " +
                           std::to_string(d.nbDims) + " but the input has rank " +
                           std::to_string(rank));
  return Status::ok();
}

// A per-channel input (scale, bias): exactly [channels].
inline Status checkPerChannel(const char* layer, const char* what, const Dims& d,
                              int64_t channels) {
  if (d.nbDims != 1 || d.d[0] != channels)
    return invalidArgument(std::string(layer) + ": " + what + " is " + dimsString(d) +
                           ", expected [" + str(channels) + "] (one per channel)");
  return Status::ok();
}

// An enum parameter holds one of its values, 0 to enumCount - 1 (kiln/ops/<op>.h): one from a
// corrupt plan or an integer cast may not. Else "<layer>: <what> <value>" ("activation: unknown
// activation type 18").
template <class E>
Status checkEnum(const char* layer, const char* what, E value) {
  const auto v = static_cast<int32_t>(value);
  if (v < 0 || v >= enumCount(E{}))
    return invalidArgument(std::string(layer) + ": " + what + " " + std::to_string(v));
  return Status::ok();
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

// Type rules (Op::computeTypes). Every input is a float, computed in fp32; else false with `why`
// naming the first input of another type.
bool floatsInFp32(const char* op, std::vector<DataType>& types, std::string& why);
// The elements are moved, not computed with: every type as it is, floats in fp32 (what the
// reference kernels are written for).
bool movedFloatsInFp32(std::vector<DataType>& types);

// Dims a layer takes from its dims source, input `source` (whose data is never read; dynamic
// shapes): dims.d[i] becomes that input's dim dimsOf[i] - 1 wherever dimsOf[i] != 0 (i < 8).
// `what` names one of the dims in messages ("reshape dim"). An error when an entry names a dim
// that `dims` or the source lacks, when there is no such input, or when one is given but no dim
// is taken from it.
Status dimsFromSource(const char* layer, const char* what, const int32_t* dimsOf,
                      const std::vector<TensorShape>& in, size_t source, Dims& dims);

// numpy broadcasting of several shapes: trailing dims aligned, a dim of 1 stretches (to 0 too).
// False with *why naming the first output dim that does not broadcast.
bool broadcastDims(const std::vector<Dims>& shapes, Dims& out, std::string* why);

// Rows and columns of op(X) for a matrix (or a stack of matrices in the last two dims).
inline void matrixRowsCols(const Dims& d, bool transpose, int64_t* rows, int64_t* cols) {
  const int64_t r = d.d[d.nbDims - 2], c = d.d[d.nbDims - 1];
  *rows = transpose ? c : r;
  *cols = transpose ? r : c;
}

}  // namespace kiln::shape
