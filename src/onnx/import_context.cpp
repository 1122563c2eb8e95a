// Values, outputs and attributes of the node being imported.
#include "onnx/import_context.h"

#include <cstring>
#include <limits>

#include "onnx/shape_corners.h"

namespace kiln::onnx_import {

ConstTensor ConstTensor::make(DataType type, const Dims& dims) {
  ConstTensor c;
  c.type = type;
  c.dims = dims;
  const int64_t n = volume(dims);
  if (type == DataType::kFLOAT)
    c.f.assign(size_t(n < 0 ? 0 : n), 0.f);
  else
    c.i.assign(size_t(n < 0 ? 0 : n), 0);
  return c;
}

void ConstTensor::set(int64_t k, double v) {
  if (isFloat())
    f[size_t(k)] = float(v);
  else if (type == DataType::kBOOL)
    i[size_t(k)] = v != 0;
  else
    i[size_t(k)] = saturatingInt64(v);
}

// double -> int64 without undefined behaviour: values beyond int64 (INT64_MAX itself rounds up to
// 2^63 as a double, and ONNX exports use it for "to the end") saturate, NaN gives 0.
int64_t saturatingInt64(double v) {
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (int32_t a = 0; a < d.nbDims; ++a) s += (a ? "," : "") + std::to_string(d.d[a]);
  return s + "]";
}

Dims dimsOf(const std::vector<int64_t>& v) {
  Dims d;
  if (v.size() > size_t(Dims::kMaxDims)) {
    d.nbDims = -1;
    return d;
  }
  for (int64_t x : v) d.d[d.nbDims++] = x;
  return d;
}

std::vector<int64_t> toInts(const ConstTensor& c) {
  if (!c.isFloat()) return c.i;  // exact: at() goes through double, which rounds beyond 2^53
  std::vector<int64_t> out(size_t(c.count()));
  for (int64_t k = 0; k < c.count(); ++k) out[size_t(k)] = saturatingInt64(c.at(k));
  return out;
}

ConstTensor intsConstant(const std::vector<int64_t>& v, DataType type) {
  ConstTensor c;
  c.type = type;
  c.dims = makeDims({int64_t(v.size())});
  c.i = v;
  return c;
}

ILayer* addReshape(INetworkDefinition& net, ITensor& in, const Dims& dims) {
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = dims;
  // A 0 in reshapeDims copies the input dim; a genuine 0-sized dim is kept by stating it as is
  // only when the input has the same dim there, which is all that static shapes allow.
  return net.addShuffle(in, p);
}

ITensor* sourceTensor(INetworkDefinition& net, const DimsSource& source) {
  for (int32_t i = 0; i < net.getNbInputs(); ++i)
    if (source.input == net.getInput(i)->getName()) return net.getInput(i);
  return nullptr;
}

Status NodeContext::sourceTensor(const DimsSource& source, ITensor*& out) const {
  out = onnx_import::sourceTensor(ctx.net, source);
  return out ? Status::ok() : error("input '" + source.input + "' is not in the network");
}

ILayer* addReshape(INetworkDefinition& net, ITensor& in, const Dims& dims,
                   const DimsSource& source) {
  if (source.input.empty()) return addReshape(net, in, dims);
  ITensor* from = sourceTensor(net, source);
  if (!from) return nullptr;
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = dims;
  std::copy(source.dimsOf, source.dimsOf + Dims::kMaxDims, p.reshapeDimsOf);
  return net.addShuffleWithDimsOf(in, *from, p);
}

bool broadcast(const std::vector<Dims>& in, Dims& out) {
  out = Dims{};
  for (const Dims& d : in) out.nbDims = std::max(out.nbDims, d.nbDims);
  for (int32_t k = 0; k < out.nbDims; ++k) out.d[k] = 1;
  for (const Dims& d : in) {
    for (int32_t k = 0; k < d.nbDims; ++k) {
      int64_t& o = out.d[out.nbDims - d.nbDims + k];
      const int64_t v = d.d[k];
      if (o == 1)
        o = v;
      else if (v != 1 && v != o)
        return false;
    }
  }
  return true;
}

// Flat index into `d` (right-aligned, size-1 dims broadcast) of output element `k` of `out`.
int64_t sourceIndex(const Dims& out, const Dims& d, int64_t k) {
  int64_t idx = 0, stride = 1;
  for (int32_t a = out.nbDims - 1; a >= 0; --a) {
    const int64_t coord = k % out.d[a];
    k /= out.d[a];
    const int32_t b = a - (out.nbDims - d.nbDims);
    if (b < 0) continue;
    if (d.d[b] != 1) idx += coord * stride;
    stride *= d.d[b];
  }
  return idx;
}

Status NodeContext::error(const std::string& message, StatusCode code) const {
  return Status(code, "node " + std::to_string(index) + " '" + node.name() + "' (" +
                          node.op_type() + "): " + message);
}

Status NodeContext::layerError() const {
  const Status& s = ctx.net.getLastError();
  return error(s.isOk() ? "the network refused the layer" : s.message(),
               s.isOk() ? StatusCode::kInvalidArgument : s.code());
}

Status NodeContext::requireInputs(int32_t min, int32_t max) const {
  if (node.input_size() < min || node.input_size() > max)
    return error("expects " + std::to_string(min) +
                 (min == max ? "" : " to " + std::to_string(max)) + " inputs, has " +
                 std::to_string(node.input_size()));
  for (int32_t i = 0; i < min; ++i)
    if (node.input(i).empty()) return error("required input " + std::to_string(i) + " is missing");
  return Status::ok();
}

bool NodeContext::isConstant(int32_t i) const {
  if (!hasInput(i)) return false;
  if (ctx.corners && !folding && ctx.corners->readsAsTensor(index, i)) return false;
  auto it = ctx.values.find(node.input(i));
  return it != ctx.values.end() && it->second.constant != nullptr;
}

Status NodeContext::constant(int32_t i, const ConstTensor*& out) const {
  if (!hasInput(i)) return error("input " + std::to_string(i) + " is missing");
  auto it = ctx.values.find(node.input(i));
  if (it == ctx.values.end()) return error("input '" + node.input(i) + "' is not defined");
  if (!it->second.constant) {
    // A graph input read here directly can be a shape-value input when its values are given.
    bool graphInput = false;
    if (ctx.graph)
      for (const auto& in : ctx.graph->input())
        graphInput = graphInput || in.name() == node.input(i);
    return unsupportedError(
        "input " + std::to_string(i) + " ('" + node.input(i) +
        "') must be a constant known at parse time" +
        (graphInput ? std::string("; to build for this graph input's values, give them "
                                  "(OnnxParserOptions::shapeValues, or kiln run --input " +
                                  node.input(i) + "=FILE)")
                    : std::string()));
  }
  out = it->second.constant.get();
  return Status::ok();
}

Status NodeContext::tensor(int32_t i, ITensor*& out) {
  if (!hasInput(i)) return error("input " + std::to_string(i) + " is missing");
  auto it = ctx.values.find(node.input(i));
  if (it == ctx.values.end()) return error("input '" + node.input(i) + "' is not defined");
  if (it->second.tensor) {
    out = it->second.tensor;
    return Status::ok();
  }
  Status s = constantTensor(ctx, it->second, node.input(i), out);
  return s ? s : error(s.message(), s.code());
}

Dims NodeContext::dims(int32_t i) const {
  auto it = ctx.values.find(node.input(i));
  if (it == ctx.values.end()) return Dims{};
  if (it->second.constant) return it->second.constant->dims;
  return it->second.tensor->getDimensions();
}

DataType NodeContext::type(int32_t i) const {
  auto it = ctx.values.find(node.input(i));
  if (it == ctx.values.end()) return DataType::kFLOAT;
  if (it->second.constant) return it->second.constant->type;
  return it->second.tensor->getType();
}

Status NodeContext::setOutput(int32_t i, ITensor* tensor) {
  if (i >= node.output_size() || node.output(i).empty()) return Status::ok();
  if (!tensor) return layerError();
  const std::string& name = node.output(i);
  // The tensor takes the ONNX name where it is still free (aliases such as Identity keep theirs).
  if (!tensor->isNetworkInput() && ctx.values.count(tensor->getName()) == 0)
    tensor->setName(name.c_str());
  Value v;
  v.tensor = tensor;
  ctx.values[name] = v;
  return Status::ok();
}

Status NodeContext::setOutput(int32_t i, ConstTensor constant) {
  if (i >= node.output_size() || node.output(i).empty()) return Status::ok();
  if (volume(constant.dims) != constant.count())
    return internalError("constant output of node " + std::to_string(index) + " has wrong size");
  Value v;
  v.constant = std::make_shared<const ConstTensor>(std::move(constant));
  ctx.values[node.output(i)] = v;
  return Status::ok();
}

Status NodeContext::setLayerOutputs(ILayer* layer) {
  if (!layer) return layerError();
  std::string name =
      node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  if (!layer->setName(name.c_str())) layer->setName((name + "_" + std::to_string(index)).c_str());
  for (int32_t k = 0; k < layer->getNbOutputs() && k < node.output_size(); ++k)
    KILN_RETURN_IF_ERROR(setOutput(k, layer->getOutput(k)));
  return Status::ok();
}

bool NodeContext::outputUsed(int32_t i) const {
  if (i >= node.output_size() || node.output(i).empty()) return false;
  auto it = ctx.uses.find(node.output(i));
  return it != ctx.uses.end() && it->second > 0;
}

const onnx::AttributeProto* NodeContext::attr(const char* name) const {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool NodeContext::wrongType(const onnx::AttributeProto* a,
                            onnx::AttributeProto_AttributeType want) {
  if (a->type() == want) return false;
  // Old exporters leave the type unset; accept the field that is filled in.
  if (a->type() == onnx::AttributeProto::UNDEFINED) {
    switch (want) {
      case onnx::AttributeProto::INT:
        if (a->has_i()) return false;
        break;
      case onnx::AttributeProto::FLOAT:
        if (a->has_f()) return false;
        break;
      case onnx::AttributeProto::STRING:
        if (a->has_s()) return false;
        break;
      case onnx::AttributeProto::INTS:
        if (a->ints_size() > 0) return false;
        break;
      case onnx::AttributeProto::FLOATS:
        if (a->floats_size() > 0) return false;
        break;
      default:
        break;
    }
  }
  if (attrError_.isOk())
    attrError_ = error("attribute '" + a->name() + "' has type " +
                       onnx::AttributeProto_AttributeType_Name(a->type()) + ", expected " +
                       onnx::AttributeProto_AttributeType_Name(want));
  return true;
}

int64_t NodeContext::attrInt(const char* name, int64_t fallback) {
  const auto* a = attr(name);
  if (!a || wrongType(a, onnx::AttributeProto::INT)) return fallback;
  return a->i();
}

float NodeContext::attrFloat(const char* name, float fallback) {
  const auto* a = attr(name);
  if (!a || wrongType(a, onnx::AttributeProto::FLOAT)) return fallback;
  return a->f();
}

std::string NodeContext::attrString(const char* name, const std::string& fallback) {
  const auto* a = attr(name);
  if (!a || wrongType(a, onnx::AttributeProto::STRING)) return fallback;
  return a->s();
}

std::vector<int64_t> NodeContext::attrInts(const char* name, std::vector<int64_t> fallback) {
  const auto* a = attr(name);
  if (!a || wrongType(a, onnx::AttributeProto::INTS)) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

std::vector<float> NodeContext::attrFloats(const char* name, std::vector<float> fallback) {
  const auto* a = attr(name);
  if (!a || wrongType(a, onnx::AttributeProto::FLOATS)) return fallback;
  return {a->floats().begin(), a->floats().end()};
}

Status NodeContext::axis(int64_t value, int32_t rank, int32_t& out) const {
  if (value < -rank || value >= rank)
    return error("axis " + std::to_string(value) + " is out of range for rank " +
                 std::to_string(rank));
  out = int32_t(value < 0 ? value + rank : value);
  return Status::ok();
}

}  // namespace kiln::onnx_import
