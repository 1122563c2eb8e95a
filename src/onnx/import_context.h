// What every op importer works with: the values of the graph (network tensors or constants known
// at parse time), the node being imported, and checked access to its attributes.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/network.h"
#include "kiln/status.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_import {

// Dims of a layer (a reshape's dims, a slice's output dims, an expand's shape, a range's length)
// taken from a dynamic graph input's dims (with profiles, onnx/shape_corners.h): that input's
// name, and per dim its axis + 1 (0: the dim is as the layer's own dims say). Empty `input`: none.
struct DimsSource {
  std::string input;
  int32_t dimsOf[Dims::kMaxDims] = {};
};

class NodeContext;
class ShapeCorners;  // onnx/shape_corners.h

// A tensor whose values are known while parsing. Floats (fp32, fp16, bf16, fp64) are kept as
// float, integers and bool as int64, so folding has two element kinds to care about; `type` says
// what the model called it.
struct ConstTensor {
  DataType type = DataType::kFLOAT;
  Dims dims;
  std::vector<float> f;    // type == kFLOAT
  std::vector<int64_t> i;  // every other type
  bool isFloat() const { return type == DataType::kFLOAT; }
  int64_t count() const { return isFloat() ? int64_t(f.size()) : int64_t(i.size()); }
  double at(int64_t k) const { return isFloat() ? double(f[size_t(k)]) : double(i[size_t(k)]); }
  // Makes an empty tensor of `type` and `dims` with storage for every element.
  static ConstTensor make(DataType type, const Dims& dims);
  void set(int64_t k, double v);
};

struct Value {
  ITensor* tensor = nullptr;                    // set once the value exists in the network
  std::shared_ptr<const ConstTensor> constant;  // set when known at parse time
};

class ImportContext {
 public:
  ImportContext(INetworkDefinition& network, int64_t opset) : net(network), opset(opset) {}
  INetworkDefinition& net;
  int64_t opset;
  std::unordered_map<std::string, Value> values;
  // How many node inputs and graph outputs read each value.
  std::unordered_map<std::string, int32_t> uses;
  std::unordered_set<std::string> graphOutputs;
  const onnx::GraphProto* graph = nullptr;
  // Set when parsing with optimization profiles (onnx/shape_corners.h): the corner parses record
  // into it, the final parse reads it. Null for a static parse.
  ShapeCorners* corners = nullptr;
  NodeContext* current = nullptr;  // the node being imported (messages, shape_corners.h)
};

class NodeContext {
 public:
  NodeContext(ImportContext& ctx, const onnx::NodeProto& node, int32_t index)
      : ctx(ctx), node(node), index(index) {}
  ImportContext& ctx;
  const onnx::NodeProto& node;
  int32_t index;

  INetworkDefinition& net() { return ctx.net; }
  int64_t opset() const { return ctx.opset; }

  // "node 12 'name' (Op): message"
  Status error(const std::string& message, StatusCode code = StatusCode::kInvalidArgument) const;
  Status unsupportedError(const std::string& message) const {
    return error(message, StatusCode::kUnsupported);
  }
  // The network refused a layer: its reason, naming the node.
  Status layerError() const;

  // Inputs. An input that is absent or named "" is optional and missing.
  int32_t nbInputs() const { return node.input_size(); }
  bool hasInput(int32_t i) const { return i < node.input_size() && !node.input(i).empty(); }
  Status requireInputs(int32_t min, int32_t max) const;
  // With profiles, false for a constant this node reads as a tensor (shape_corners.h:
  // readsAsTensor), except while folding.
  bool isConstant(int32_t i) const;
  // The constant behind input i, or an error saying the input must be a constant.
  Status constant(int32_t i, const ConstTensor*& out) const;
  // A network tensor for input i, adding a constant layer for constants.
  Status tensor(int32_t i, ITensor*& out);
  Dims dims(int32_t i) const;  // static dims of input i (tensor or constant)
  DataType type(int32_t i) const;

  // Outputs: the layer's output names the ONNX value.
  Status setOutput(int32_t i, ITensor* tensor);
  Status setOutput(int32_t i, ConstTensor constant);
  Status setLayerOutputs(ILayer* layer);  // names the layer and sets outputs 0..n-1
  bool outputUsed(int32_t i) const;

  // Layer parameters computed from shapes at parse time (onnx/shape_corners.h). Without profiles
  // they are as given; with them, each call records its values at every corner, and in the final
  // parse makes them shape-generic or refuses what depends on the input shapes.
  // Reshape dims `dims` (at the working shape) of a reshape applied to dims `in`: 0 (copy) and
  // -1 (inferred) where they depend on the input shapes; with `source`, where more than one dim
  // does, a dim equal to a dynamic graph input's dim at every corner is taken from that input
  // (ShuffleParams::reshapeDimsOf).
  Status reshapeDims(const Dims& in, Dims& dims, DimsSource* source = nullptr);
  // A reshape layer of `in` to `dims` through reshapeDims (layerError when refused).
  Status reshape(ITensor& in, const Dims& dims, ILayer*& layer);
  // Expand's target `shape` for an input of dims `in`: 1 (keep the input's) where it depends on
  // the input shapes and equals the input's dim.
  // With `source`, another dim that depends on them and is a dynamic graph input's dim at every
  // corner is taken from that input (ExpandParams::shapeDimsOf).
  Status expandShape(const Dims& in, Dims& shape, DimsSource* source = nullptr);
  // A slice of an input of dims `in`: an output dim that depends on the input shapes becomes -1
  // (to the end) where it reads to the end of the axis at every corner, or with `source` is
  // taken from a dynamic graph input whose dim it is at every corner (SliceParams::outputDimsOf);
  // changing starts or steps, or any other changing dim, are refused. `whose` ("its", "output
  // 1's") names the output.
  Status sliceParams(const Dims& in, SliceParams& p, const std::string& whose,
                     DimsSource* source = nullptr);
  // Dims a layer made from shape arithmetic has (a range's length, a ConstantOfShape's shape):
  // in the final parse, each that depends on the input shapes is taken from the dynamic graph
  // input whose dim it is at every corner (one input for all), else refused; `what` names them.
  Status dimsFromInputs(const std::string& what, const Dims& dims, DimsSource& source);
  // With profiles (shape_corners.h): the node computes, from constants, values that depend on the
  // input shapes and are read as data, so it must make layers rather than fold (a Range of
  // position ids, a causal mask's ConstantOfShape and Trilu); its data inputs read as tensors.
  // False while the node is first folded (importNode: a value that follows the input shapes may
  // be read both as data and as a shape operand, so it keeps its constant beside its tensor).
  bool makesLayers() const;
  bool folding = false;
  // Values a layer keeps literally (a slice's starts, a resize's output dims): refused when they
  // differ between the corners. `what` names them in the message.
  Status literal(const std::string& what, const std::vector<int64_t>& values);
  // Input i is a shape operand the importer made shape-generic: the final parse does not refuse
  // it for differing between the corners.
  void markGeneric(int32_t i) {
    if (i >= 0 && i < 32) genericInputs_ |= uint32_t(1) << i;
  }
  bool isGeneric(int32_t i) const { return i >= 0 && i < 32 && (genericInputs_ >> i & 1u); }
  // The network tensor of the graph input a DimsSource names (the layer's dims source), or an
  // error naming it.
  Status sourceTensor(const DimsSource& source, ITensor*& out) const;
  // Tells this node's calls above apart (in call order).
  std::string nextSiteKey(const char* kind) { return std::to_string(sites_++) + " " + kind; }

  // Attributes. A wrong attribute type is remembered and reported after the importer returns.
  const onnx::AttributeProto* attr(const char* name) const;
  int64_t attrInt(const char* name, int64_t fallback);
  float attrFloat(const char* name, float fallback);
  std::string attrString(const char* name, const std::string& fallback);
  std::vector<int64_t> attrInts(const char* name, std::vector<int64_t> fallback = {});
  std::vector<float> attrFloats(const char* name, std::vector<float> fallback = {});
  const Status& attributeError() const { return attrError_; }

  // Converts an ONNX axis (negative counts from the end) for a tensor of `rank` dims.
  Status axis(int64_t value, int32_t rank, int32_t& out) const;

 private:
  bool wrongType(const onnx::AttributeProto* a, onnx::AttributeProto_AttributeType want);
  Status attrError_;
  uint32_t genericInputs_ = 0;
  int32_t sites_ = 0;
};

// Materialises a constant as a network tensor (cached in the value).
Status constantTensor(ImportContext& ctx, Value& value, const std::string& name, ITensor*& out);

// TensorProto -> constant (raw_data or typed fields; external data refused).
Status constantFromProto(const onnx::TensorProto& proto, ConstTensor& out);
// ONNX element type -> kiln type; false when kiln has no such type.
bool dataTypeFromOnnx(int32_t onnxType, DataType& out);

using Importer = std::function<Status(NodeContext&)>;
// The built-in importer for an op type, or nullptr.
const Importer* findImporter(const std::string& opType);
Status importPluginNode(NodeContext& n);

// Importer tables, one per family file.
// One op type's importer, and the inputs it needs as constants at parse time (weights, and shape
// operands such as Reshape's shape: folded at parse time, at each profile corner with profiles).
struct ImporterEntry {
  const char* opType;
  Importer import;
  std::vector<int32_t> constantInputs = {};
};
using ImporterTable = std::vector<ImporterEntry>;
void addActivationImporters(ImporterTable& t);
void addElementwiseImporters(ImporterTable& t);
void addConvImporters(ImporterTable& t);
void addPoolImporters(ImporterTable& t);
void addMatmulImporters(ImporterTable& t);
void addEinsumImporters(ImporterTable& t);
void addShapeImporters(ImporterTable& t);
void addTensorImporters(ImporterTable& t);
void addResizeImporters(ImporterTable& t);
void addReduceImporters(ImporterTable& t);
void addMiscImporters(ImporterTable& t);
void addIndexImporters(ImporterTable& t);

// Small helpers shared by importers.

// The value that `name` stands for in a table of (name, value) pairs, such as the choices of a
// string attribute; false when it is none of the names.
template <class V>
bool lookupName(const std::string& name, std::initializer_list<std::pair<const char*, V>> table,
                V& out) {
  for (const auto& [n, v] : table) {
    if (name == n) {
      out = v;
      return true;
    }
  }
  return false;
}
Dims dimsOf(const std::vector<int64_t>& v);
std::string dimsText(const Dims& d);                // "[2,3,4]", for messages
std::vector<int64_t> toInts(const ConstTensor& c);  // exact for integer constants
int64_t saturatingInt64(double v);                  // beyond int64: saturates; NaN: 0
ConstTensor intsConstant(const std::vector<int64_t>& v, DataType type = DataType::kINT64);
// Folding makes constants at most this large (elements); anything bigger is refused rather than
// allocated (a hostile model can ask for any size).
constexpr int64_t kMaxFoldElements = int64_t(1) << 26;
inline bool foldable(const Dims& d) {
  const int64_t v = volume(d);
  return d.nbDims >= 0 && v >= 0 && v <= kMaxFoldElements;
}

// numpy broadcasting of several shapes; false when they do not broadcast.
bool broadcast(const std::vector<Dims>& in, Dims& out);
// Flat index into `d` (right-aligned, size-1 dims broadcast) of element `k` of `out`.
int64_t sourceIndex(const Dims& out, const Dims& d, int64_t k);
// The network input a DimsSource names, or nullptr.
ITensor* sourceTensor(INetworkDefinition& net, const DimsSource& source);
// Reshape (no data movement) of a tensor through a shuffle layer.
ILayer* addReshape(INetworkDefinition& net, ITensor& in, const Dims& dims);
// The same, with the dims `source` names taken from that graph input (a shuffle with a second
// input); a plain reshape when it names none.
ILayer* addReshape(INetworkDefinition& net, ITensor& in, const Dims& dims,
                   const DimsSource& source);

}  // namespace kiln::onnx_import
