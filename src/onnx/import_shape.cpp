// Ops that only look at or change shapes: Shape, Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Identity, Dropout, Cast, Constant, ConstantOfShape. On constants they fold.
#include <algorithm>
#include <cmath>

#include "kiln/float16.h"
#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

// Sets output 0 to input 0 reshaped to `dims`: a new constant, or a shuffle layer.
Status reshapeTo(NodeContext& n, const Dims& dims) {
  if (dims.nbDims < 0) return n.unsupportedError("the result has more than 8 dims");
  for (int32_t k = 0; k < dims.nbDims; ++k)
    if (dims.d[k] == 0 && !n.isConstant(0))
      return n.unsupportedError("zero-sized tensors are not supported");
  if (volume(dims) != volume(n.dims(0)))
    return n.error("cannot reshape " + std::to_string(volume(n.dims(0))) + " elements to " +
                   std::to_string(volume(dims)));
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    ConstTensor out = *c;
    out.dims = dims;
    return n.setOutput(0, std::move(out));
  }
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  // With profiles the result's dims become generic (0 / -1), whatever operand they came from.
  n.markGeneric(1);
  ILayer* layer = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*in, dims, layer));
  return n.setLayerOutputs(layer);
}

Status importShape(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const Dims d = n.dims(0);
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", d.nbDims);
  if (start < 0) start += d.nbDims;
  if (end < 0) end += d.nbDims;
  start = std::clamp<int64_t>(start, 0, d.nbDims);
  end = std::clamp<int64_t>(end, 0, d.nbDims);
  if (n.makesLayers()) {
    // With profiles, dims that follow a dynamic input and are read as data (the sequence length
    // in a padding mask's index math): the Shape layer gives them at run time.
    ITensor* in = nullptr;
    KILN_RETURN_IF_ERROR(n.tensor(0, in));
    ShapeParams p;
    p.start = int32_t(start);
    p.end = int32_t(end);
    return n.setLayerOutputs(n.net().addLayer(p, {in}));
  }
  std::vector<int64_t> v;
  for (int64_t k = start; k < end; ++k) v.push_back(d.d[k]);
  return n.setOutput(0, intsConstant(v));
}

Status importReshape(NodeContext& n) {
  if (n.attr("shape"))
    return n.unsupportedError("the shape attribute (opset < 5) is not supported");
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  const ConstTensor* shape = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(1, shape));
  const Dims in = n.dims(0);
  const bool allowZero = n.attrInt("allowzero", 0) != 0;
  std::vector<int64_t> v = toInts(*shape);
  if (v.size() > size_t(Dims::kMaxDims))
    return n.unsupportedError("the target shape has more than 8 dims");
  int32_t inferred = -1;
  int64_t known = 1;
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] == 0 && !allowZero) {
      if (int32_t(k) >= in.nbDims)
        return n.error("shape value 0 at index " + std::to_string(k) + " has no input dim to copy");
      v[k] = in.d[k];
    }
    if (v[k] == -1) {
      if (inferred >= 0) return n.error("shape has more than one -1");
      inferred = int32_t(k);
      continue;
    }
    if (v[k] < 0) return n.error("shape has a negative value " + std::to_string(v[k]));
    known *= v[k];
  }
  if (inferred >= 0) {
    if (known == 0 || volume(in) % known != 0)
      return n.error("cannot infer the -1 dim of the target shape");
    v[size_t(inferred)] = volume(in) / known;
  }
  return reshapeTo(n, dimsOf(v));
}

Status importFlatten(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const Dims in = n.dims(0);
  int64_t axis = n.attrInt("axis", 1);
  if (axis < 0) axis += in.nbDims;
  if (axis < 0 || axis > in.nbDims) return n.error("axis is out of range");
  int64_t outer = 1, inner = 1;
  for (int32_t k = 0; k < in.nbDims; ++k) (k < axis ? outer : inner) *= in.d[k];
  return reshapeTo(n, makeDims({outer, inner}));
}

Status axesInput(NodeContext& n, const char* attrName, int32_t inputIndex,
                 std::vector<int64_t>& axes, bool& given) {
  given = false;
  if (n.opset() >= 13) {
    if (n.hasInput(inputIndex)) {
      const ConstTensor* c = nullptr;
      KILN_RETURN_IF_ERROR(n.constant(inputIndex, c));
      axes = toInts(*c);
      given = true;
    }
  } else if (n.attr(attrName)) {
    axes = n.attrInts(attrName);
    given = true;
  }
  return Status::ok();
}

// Squeeze's and Unsqueeze's operands: the data's dims and the axes (input 1, or the attribute
// before opset 13), `given` false when there are none.
Status squeezeOperands(NodeContext& n, Dims& in, std::vector<int64_t>& axes, bool& given) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 2));
  in = n.dims(0);
  return axesInput(n, "axes", 1, axes, given);
}

Status importSqueeze(NodeContext& n) {
  Dims in;
  std::vector<int64_t> axes;
  bool given;
  KILN_RETURN_IF_ERROR(squeezeOperands(n, in, axes, given));
  bool drop[Dims::kMaxDims] = {};
  if (!given) {
    for (int32_t k = 0; k < in.nbDims; ++k) drop[k] = in.d[k] == 1;
  }
  for (int64_t a : axes) {
    int32_t ax;
    KILN_RETURN_IF_ERROR(n.axis(a, in.nbDims, ax));
    if (in.d[ax] != 1)
      return n.error("cannot squeeze axis " + std::to_string(a) + " of size " +
                     std::to_string(in.d[ax]));
    drop[ax] = true;
  }
  Dims out;
  for (int32_t k = 0; k < in.nbDims; ++k)
    if (!drop[k]) out.d[out.nbDims++] = in.d[k];
  return reshapeTo(n, out);
}

Status importUnsqueeze(NodeContext& n) {
  Dims in;
  std::vector<int64_t> axes;
  bool given;
  KILN_RETURN_IF_ERROR(squeezeOperands(n, in, axes, given));
  if (!given) return n.error("axes are required");
  const int32_t rank = in.nbDims + int32_t(axes.size());
  if (rank > Dims::kMaxDims) return n.unsupportedError("the result has more than 8 dims");
  bool added[Dims::kMaxDims] = {};
  for (int64_t a : axes) {
    int32_t ax;
    KILN_RETURN_IF_ERROR(n.axis(a, rank, ax));
    if (added[ax]) return n.error("axis " + std::to_string(a) + " is repeated");
    added[ax] = true;
  }
  Dims out;
  out.nbDims = rank;
  for (int32_t k = 0, j = 0; k < rank; ++k) out.d[k] = added[k] ? 1 : in.d[j++];
  return reshapeTo(n, out);
}

Status importTranspose(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const Dims in = n.dims(0);
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (int32_t k = in.nbDims - 1; k >= 0; --k) perm.push_back(k);
  if (int32_t(perm.size()) != in.nbDims) return n.error("perm must have one value per input dim");
  bool seen[Dims::kMaxDims] = {};
  for (int64_t p : perm) {
    if (p < 0 || p >= in.nbDims || seen[p]) return n.error("perm is not a permutation");
    seen[p] = true;
  }
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    Dims od;
    od.nbDims = in.nbDims;
    for (int32_t k = 0; k < in.nbDims; ++k) od.d[k] = in.d[perm[size_t(k)]];
    ConstTensor out = ConstTensor::make(c->type, od);
    int64_t inStride[Dims::kMaxDims];
    for (int32_t k = in.nbDims - 1, s = 1; k >= 0; --k) inStride[k] = s, s *= int32_t(in.d[k]);
    for (int64_t e = 0; e < out.count(); ++e) {
      int64_t rem = e, src = 0;
      for (int32_t k = od.nbDims - 1; k >= 0; --k) {
        src += (rem % od.d[k]) * inStride[perm[size_t(k)]];
        rem /= od.d[k];
      }
      out.set(e, c->at(src));
    }
    return n.setOutput(0, std::move(out));
  }
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  ShuffleParams p;
  p.hasFirstTranspose = true;
  for (int32_t k = 0; k < in.nbDims; ++k) p.firstTranspose[k] = int32_t(perm[size_t(k)]);
  return n.setLayerOutputs(n.net().addShuffle(*t, p));
}

Status importIdentity(NodeContext& n) {
  if (n.nbInputs() < 1 || !n.hasInput(0)) return n.error("input 0 is missing");
  if (n.node.op_type() == "Dropout") {
    if (n.attrInt("is_test", 1) == 0) return n.unsupportedError("training mode is not supported");
    if (n.hasInput(2)) {  // training_mode (opset 12+): inference only, unless nothing drops
      const ConstTensor* c = nullptr;
      KILN_RETURN_IF_ERROR(n.constant(2, c));
      // A ratio of 0 drops nothing, in training mode too (onnxruntime agrees): torchvision's
      // Swin exports its attention dropout so, with training_mode true and ratio 0.
      double ratio = 0.5;
      if (n.hasInput(1)) {
        const ConstTensor* r = nullptr;
        KILN_RETURN_IF_ERROR(n.constant(1, r));
        if (r->count() != 1) return n.error("ratio must be a scalar");
        ratio = r->at(0);
      }
      if (c->count() != 1) return n.error("training_mode must be a scalar");
      if (c->at(0) != 0 && ratio != 0)
        return n.unsupportedError("training mode is not supported (ratio " + std::to_string(ratio) +
                                  ")");
    }
  }
  if (n.outputUsed(1)) {
    // Dropout's mask in inference: all true.
    if (!foldable(n.dims(0))) return n.unsupportedError("the mask is too large to fold");
    ConstTensor mask = ConstTensor::make(DataType::kBOOL, n.dims(0));
    std::fill(mask.i.begin(), mask.i.end(), 1);
    KILN_RETURN_IF_ERROR(n.setOutput(1, std::move(mask)));
  }
  n.ctx.values[n.node.output(0)] = n.ctx.values[n.node.input(0)];
  return Status::ok();
}

Status importCast(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const auto* to = n.attr("to");
  if (!to) return n.error("attribute 'to' is required");
  const int64_t onnxType = n.attrInt("to", 1);
  using TP = onnx::TensorProto;
  const bool toFloat = onnxType == TP::FLOAT || onnxType == TP::FLOAT16 ||
                       onnxType == TP::BFLOAT16 || onnxType == TP::DOUBLE;
  DataType target = DataType::kFLOAT;
  if (!toFloat && !dataTypeFromOnnx(int32_t(onnxType), target)) {
    if (onnxType == TP::UINT8 || onnxType == TP::INT16 || onnxType == TP::UINT16)
      target = DataType::kINT32;
    else if (onnxType == TP::UINT32 || onnxType == TP::UINT64)
      target = DataType::kINT64;
    else
      return n.unsupportedError("cast to element type " + std::to_string(onnxType) +
                                " is not supported");
  }
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    ConstTensor out = ConstTensor::make(target, c->dims);
    for (int64_t k = 0; k < c->count(); ++k) {
      double v = c->at(k);
      if (!toFloat && target != DataType::kBOOL) v = std::trunc(v);
      out.set(k, v);
    }
    if (onnxType == TP::FLOAT16)
      for (float& v : out.f) v = halfToFloat(floatToHalf(v));
    if (onnxType == TP::BFLOAT16)
      for (float& v : out.f) v = bf16ToFloat(floatToBf16(v));
    return n.setOutput(0, std::move(out));
  }
  // A run-time tensor: a cast layer (the builder's reformat). A cast that changes nothing is an
  // alias.
  const DataType in = n.type(0);
  const DataType runtimeTarget = onnxType == TP::FLOAT16    ? DataType::kHALF
                                 : onnxType == TP::BFLOAT16 ? DataType::kBF16
                                 : toFloat                  ? DataType::kFLOAT
                                                            : target;
  const bool exact = onnxType != TP::UINT8 && onnxType != TP::INT16 && onnxType != TP::UINT16 &&
                     onnxType != TP::UINT32 && onnxType != TP::UINT64;
  if (!exact) {
    return n.unsupportedError("casting a run-time tensor to element type " +
                              std::to_string(onnxType) + " is not supported");
  }
  if (in == runtimeTarget) {
    n.ctx.values[n.node.output(0)] = n.ctx.values[n.node.input(0)];
    return Status::ok();
  }
  ITensor* x = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  return n.setLayerOutputs(n.net().addCast(*x, runtimeTarget));
}

Status constantAttribute(NodeContext& n, ConstTensor& out) {
  for (const auto& a : n.node.attribute()) {
    if (a.name() == "value") {
      if (a.type() != onnx::AttributeProto::TENSOR)
        return n.error("attribute 'value' must be a TENSOR");
      Status s = constantFromProto(a.t(), out);
      return s ? s : n.error(s.message(), s.code());
    }
    if (a.name() == "value_float") {
      out = ConstTensor::make(DataType::kFLOAT, Dims{});
      out.f[0] = n.attrFloat("value_float", 0.f);
      return Status::ok();
    }
    if (a.name() == "value_floats") {
      out.type = DataType::kFLOAT;
      out.f = n.attrFloats("value_floats");
      out.dims = makeDims({int64_t(out.f.size())});
      return Status::ok();
    }
    if (a.name() == "value_int") {
      out = intsConstant({n.attrInt("value_int", 0)});
      out.dims = Dims{};
      return Status::ok();
    }
    if (a.name() == "value_ints") {
      out = intsConstant(n.attrInts("value_ints"));
      return Status::ok();
    }
  }
  return n.unsupportedError("needs a 'value', 'value_float(s)' or 'value_int(s)' attribute");
}

Status importConstant(NodeContext& n) {
  ConstTensor c;
  KILN_RETURN_IF_ERROR(constantAttribute(n, c));
  return n.setOutput(0, std::move(c));
}

// With profiles, a ConstantOfShape whose shape follows the input shapes and is read as data (the
// full(-inf) of a causal mask, before its Trilu): the value at dims of 1, expanded to the shape,
// whose dims that vary are a dynamic input's dims at run time.
Status fillLayer(NodeContext& n, const ConstTensor& value, const Dims& dims) {
  DimsSource source;
  KILN_RETURN_IF_ERROR(n.dimsFromInputs("its shape", dims, source));
  n.markGeneric(0);
  Dims ones = dims;
  for (int32_t k = 0; k < ones.nbDims; ++k) ones.d[k] = 1;
  ConstTensor one = ConstTensor::make(value.type, ones);
  one.set(0, value.at(0));
  Value v;
  v.constant = std::make_shared<const ConstTensor>(std::move(one));
  ITensor* c = nullptr;
  KILN_RETURN_IF_ERROR(constantTensor(n.ctx, v, n.node.output(0) + "_value", c));
  ExpandParams p;
  p.shape = dims;
  std::copy(source.dimsOf, source.dimsOf + Dims::kMaxDims, p.shapeDimsOf);
  if (source.input.empty()) return n.setLayerOutputs(n.net().addExpand(*c, p));
  ITensor* from = nullptr;
  KILN_RETURN_IF_ERROR(n.sourceTensor(source, from));
  return n.setLayerOutputs(n.net().addLayer(p, {c, from}));
}

Status importConstantOfShape(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
  const ConstTensor* shape = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(0, shape));
  const std::vector<int64_t> v = toInts(*shape);
  for (int64_t d : v)
    if (d < 0) return n.error("shape has a negative value");
  ConstTensor value = ConstTensor::make(DataType::kFLOAT, Dims{});
  if (n.attr("value")) {
    KILN_RETURN_IF_ERROR(constantAttribute(n, value));
    if (value.count() != 1) return n.error("value must have one element");
  }
  const Dims dims = dimsOf(v);
  if (dims.nbDims < 0) return n.unsupportedError("more than 8 dims");
  if (n.makesLayers()) return fillLayer(n, value, dims);
  if (!foldable(dims)) return n.unsupportedError("the constant is too large");
  ConstTensor out = ConstTensor::make(value.type, dims);
  for (int64_t k = 0; k < out.count(); ++k) out.set(k, value.at(0));
  return n.setOutput(0, std::move(out));
}

}  // namespace

void addShapeImporters(ImporterTable& t) {
  t.push_back({"Shape", importShape});
  t.push_back({"Reshape", importReshape, {1}});
  t.push_back({"Flatten", importFlatten});
  t.push_back({"Squeeze", importSqueeze, {1}});
  t.push_back({"Unsqueeze", importUnsqueeze, {1}});
  t.push_back({"Transpose", importTranspose});
  t.push_back({"Identity", importIdentity});
  t.push_back({"Dropout", importIdentity, {1, 2}});
  t.push_back({"Cast", importCast});
  t.push_back({"Constant", importConstant});
  t.push_back({"ConstantOfShape", importConstantOfShape, {0}});
}

}  // namespace kiln::onnx_import
