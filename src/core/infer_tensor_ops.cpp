// Shape and type inference for the layers that normalise, join, move or reduce whole tensors:
// softmax, concatenation, shuffle, reduce and the builder's reformat.
#include <string>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {

Status inferSoftmax(const SoftmaxParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out) {
  const char* layer = "softmax";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  if (!light::isFloatType(in[0].type))
    return invalidArgument(std::string("softmax: needs a floating-point input, got ") +
                           dataTypeName(in[0].type));
  if (in[0].dims.nbDims < 1) return invalidArgument("softmax: input must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(light::normalizeAxis(layer, p.axis, in[0].dims.nbDims, &axis));
  out.assign(1, in[0]);
  return Status::ok();
}

Status inferConcatenation(const ConcatenationParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out) {
  const char* layer = "concatenation";
  if (in.empty()) return invalidArgument("concatenation: needs at least one input");
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const Dims& first = in[0].dims;
  if (first.nbDims < 1) return invalidArgument("concatenation: inputs must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(light::normalizeAxis(layer, p.axis, first.nbDims, &axis));
  Dims o = first;
  o.d[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Dims& d = in[i].dims;
    if (in[i].type != in[0].type)
      return invalidArgument("concatenation: input " + std::to_string(i) + " is " +
                             dataTypeName(in[i].type) + " but input 0 is " +
                             dataTypeName(in[0].type));
    if (d.nbDims != first.nbDims)
      return invalidArgument("concatenation: input " + std::to_string(i) + " dims " +
                             light::dimsString(d) + " have a different rank from input 0 dims " +
                             light::dimsString(first));
    for (int32_t k = 0; k < d.nbDims; ++k)
      if (k != axis && d.d[k] != first.d[k])
        return invalidArgument("concatenation: input " + std::to_string(i) + " dims " +
                               light::dimsString(d) + " differ from input 0 dims " +
                               light::dimsString(first) + " in dim " + std::to_string(k) +
                               " (only axis " + std::to_string(axis) + " may differ)");
    // Each dim is below 2^60 (checkShape), so the sum cannot overflow before the check.
    o.d[axis] += d.d[axis];
    KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  }
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

namespace {

Dims permuteDims(const Dims& d, const int32_t* perm) {
  Dims o;
  o.nbDims = d.nbDims;
  for (int32_t i = 0; i < d.nbDims; ++i) o.d[i] = d.d[perm[i]];
  return o;
}

Status applyReshape(const Dims& reshape, const Dims& t, Dims* o) {
  if (reshape.nbDims < 0 || reshape.nbDims > Dims::kMaxDims)
    return invalidArgument("shuffle: reshape rank " + std::to_string(reshape.nbDims) +
                           " is outside [0, 8]");
  *o = reshape;
  int32_t inferred = -1;
  int64_t known = 1;  // product of the dims other than the inferred one
  for (int32_t i = 0; i < reshape.nbDims; ++i) {
    const int64_t r = reshape.d[i];
    if (r == 0) {
      // TensorRT's placeholder: copy the dim at the same index of the reshape's input.
      if (i >= t.nbDims)
        return invalidArgument("shuffle: reshape dim " + std::to_string(i) +
                               " is 0 (copy the input dim) but the input " + light::dimsString(t) +
                               " has no dim " + std::to_string(i));
      o->d[i] = t.d[i];
    } else if (r == -1) {
      if (inferred >= 0)
        return invalidArgument("shuffle: reshape dims " + light::dimsString(reshape) +
                               " have more than one -1");
      inferred = i;
      continue;
    } else if (r < 0) {
      return invalidArgument("shuffle: reshape dims " + light::dimsString(reshape) + " contain " +
                             std::to_string(r) + "; only -1 may be negative");
    }
    if (o->d[i] != 0 && known > (int64_t{1} << 62) / o->d[i])
      return invalidArgument("shuffle: reshape dims " + light::dimsString(reshape) +
                             " are too large");
    known *= o->d[i];
  }
  const int64_t v = volume(t);
  if (inferred >= 0) {
    if (known == 0)
      return invalidArgument("shuffle: reshape dims " + light::dimsString(reshape) +
                             " cannot infer the -1 dim: the other dims have volume 0");
    if (v % known != 0)
      return invalidArgument("shuffle: cannot reshape " + light::dimsString(t) + " (volume " +
                             std::to_string(v) + ") to " + light::dimsString(reshape) +
                             ": volume is not a multiple of " + std::to_string(known));
    o->d[inferred] = v / known;
  } else if (known != v) {
    return invalidArgument("shuffle: cannot reshape " + light::dimsString(t) + " (volume " +
                           std::to_string(v) + ") to " + light::dimsString(*o) + " (volume " +
                           std::to_string(known) + ")");
  }
  return Status::ok();
}

}  // namespace

Status inferShuffle(const ShuffleParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out) {
  const char* layer = "shuffle";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  Dims t = in[0].dims;
  std::string why;
  if (p.hasFirstTranspose) {
    if (!light::isPermutation(p.firstTranspose, t.nbDims, &why))
      return invalidArgument("shuffle: first transpose is not a permutation of the " +
                             std::to_string(t.nbDims) + " input dims: " + why);
    t = permuteDims(t, p.firstTranspose);
  }
  if (p.hasReshape) {
    Dims r;
    KILN_RETURN_IF_ERROR(applyReshape(p.reshapeDims, t, &r));
    t = r;
  }
  if (p.hasSecondTranspose) {
    if (!light::isPermutation(p.secondTranspose, t.nbDims, &why))
      return invalidArgument("shuffle: second transpose is not a permutation of the " +
                             std::to_string(t.nbDims) + " reshaped dims: " + why);
    t = permuteDims(t, p.secondTranspose);
  }
  out.assign(1, TensorShape{t, in[0].type});
  return Status::ok();
}

Status inferReduce(const ReduceParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out) {
  const char* layer = "reduce";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const int32_t op = static_cast<int32_t>(p.op);
  if (op < static_cast<int32_t>(ReduceOp::kSUM) || op > static_cast<int32_t>(ReduceOp::kARGMAX))
    return invalidArgument("reduce: unknown op " + std::to_string(op));
  const bool argmax = p.op == ReduceOp::kARGMAX;
  const DataType t = in[0].type;
  if (argmax ? !(light::isFloatType(t) || t == DataType::kINT32 || t == DataType::kINT64)
             : !light::isFloatType(t))
    return invalidArgument(std::string("reduce: needs a floating-point") +
                           (argmax ? ", int32 or int64" : "") + " input, got " + dataTypeName(t));
  const Dims& d = in[0].dims;
  if (p.axesMask == 0) return invalidArgument("reduce: axesMask is 0: no axis to reduce");
  if (argmax && (p.axesMask & (p.axesMask - 1)) != 0)
    return invalidArgument("reduce: argmax needs exactly one axis, axesMask is " +
                           std::to_string(p.axesMask));
  for (int32_t bit = 31; bit >= d.nbDims; --bit)
    if ((p.axesMask >> bit) & 1u)
      return invalidArgument("reduce: axesMask names axis " + std::to_string(bit) +
                             " but the input dims " + light::dimsString(d) + " have rank " +
                             std::to_string(d.nbDims));
  Dims o;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const bool reduced = (p.axesMask >> i) & 1u;
    if (!reduced)
      o.d[o.nbDims++] = d.d[i];
    else if (p.keepDims)
      o.d[o.nbDims++] = 1;
    // The index of the maximum of nothing does not exist.
    if (argmax && reduced && d.d[i] == 0)
      return invalidArgument("reduce: argmax over axis " + std::to_string(i) +
                             " of size 0 in dims " + light::dimsString(d));
  }
  out.assign(1, TensorShape{o, argmax ? DataType::kINT64 : t});
  return Status::ok();
}

namespace {

// Which type conversions a reformat does. Plain value casts only: int8 <-> float would be a
// quantization (it needs a scale that reformat does not carry), and the 16-bit floats go to and
// from integers through fp32, so those pairs are refused rather than given a surprising meaning.
bool reformatConversionAllowed(DataType from, DataType to) {
  if (from == to) return true;
  auto isInt = [](DataType t) {
    return t == DataType::kINT8 || t == DataType::kINT32 || t == DataType::kINT64 ||
           t == DataType::kBOOL;
  };
  if (light::isFloatType(from) && light::isFloatType(to)) return true;
  if (isInt(from) && isInt(to)) return true;
  // fp32 <-> int32/int64/bool; not int8 (quantized) and not fp16/bf16.
  auto castsWithFp32 = [](DataType t) {
    return t == DataType::kINT32 || t == DataType::kINT64 || t == DataType::kBOOL;
  };
  if (from == DataType::kFLOAT && castsWithFp32(to)) return true;
  if (to == DataType::kFLOAT && castsWithFp32(from)) return true;
  return false;
}

}  // namespace

Status inferReformat(const ReformatParams& p, const std::vector<TensorShape>& in,
                     std::vector<TensorShape>& out) {
  const char* layer = "reformat";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  if (dataTypeSize(p.outputType) == 0)
    return invalidArgument("reformat: invalid output type " +
                           std::to_string(static_cast<int32_t>(p.outputType)));
  if (p.outputFormat != TensorFormat::kLINEAR && p.outputFormat != TensorFormat::kCHANNELS_LAST)
    return invalidArgument("reformat: invalid output format " +
                           std::to_string(static_cast<int32_t>(p.outputFormat)));
  if (p.outputFormat == TensorFormat::kCHANNELS_LAST && in[0].dims.nbDims != 4)
    return invalidArgument("reformat: channels_last needs a rank-4 tensor, got dims " +
                           light::dimsString(in[0].dims));
  if (!reformatConversionAllowed(in[0].type, p.outputType)) {
    std::string why = std::string("reformat: no conversion from ") + dataTypeName(in[0].type) +
                      " to " + dataTypeName(p.outputType);
    if (in[0].type == DataType::kINT8 || p.outputType == DataType::kINT8)
      why += " (int8 <-> float is a quantization and needs a scale)";
    else
      why += " (16-bit floats convert to and from integers through fp32)";
    return unsupported(why);
  }
  out.assign(1, TensorShape{in[0].dims, p.outputType});
  return Status::ok();
}

}  // namespace kiln
