#include <cstdint>
#include <cstring>

#include "builder/graph_shapes.h"
#include "builder/network_impl.h"
#include "core/log.h"
#include "kiln/registry.h"
#include "ops/op_table.h"
#include "plugin/plugin_object.h"

namespace kiln {

// ---- handles ------------------------------------------------------------------------------------

namespace {

// The tensor at position i of a layer's inputs or outputs; nullptr outside the list.
ITensor* tensorAt(const NetworkImpl& net, const std::vector<int32_t>& list, int32_t i) {
  if (i < 0 || i >= static_cast<int32_t>(list.size())) return nullptr;
  return net.getTensorHandle(list[i]);
}

}  // namespace

const char* TensorImpl::getName() const { return net_.graph().tensors[index_].name.c_str(); }
bool TensorImpl::setName(const char* name) { return name && net_.renameTensor(index_, name); }
Dims TensorImpl::getDimensions() const {
  const GraphTensor& t = net_.graph().tensors[index_];
  return t.isInput ? t.declared : t.shape.dims;
}
DataType TensorImpl::getType() const { return net_.graph().tensors[index_].shape.type; }
bool TensorImpl::isNetworkInput() const { return net_.graph().tensors[index_].isInput; }
bool TensorImpl::isNetworkOutput() const { return net_.graph().tensors[index_].isOutput; }
bool TensorImpl::setDimensionName(int32_t index, const char* name) {
  GraphTensor& t = net_.mutableGraph().tensors[index_];
  if (!t.isInput || !name || !*name || index < 0 || index >= t.declared.nbDims ||
      t.declared.d[index] >= 0)
    return false;
  t.dimNames[index] = name;
  return true;
}
const char* TensorImpl::getDimensionName(int32_t index) const {
  const GraphTensor& t = net_.graph().tensors[index_];
  if (!t.isInput || index < 0 || index >= t.declared.nbDims || t.dimNames[index].empty())
    return nullptr;
  return t.dimNames[index].c_str();
}

bool TensorImpl::setShapeValues(const int64_t* values, int64_t count) {
  GraphTensor& t = net_.mutableGraph().tensors[index_];
  const DataType type = t.shape.type;
  // volume() is -1 for dims with a dynamic (-1) dim, which no count matches.
  if (!t.isInput || (type != DataType::kINT32 && type != DataType::kINT64) || count < 0 ||
      (count > 0 && !values) || volume(t.declared) != count)
    return false;
  for (int64_t k = 0; k < count; ++k) {
    if (type == DataType::kINT32 && (values[k] < INT32_MIN || values[k] > INT32_MAX)) return false;
  }
  t.shapeValues.assign(values, values + count);
  t.isShapeValue = true;
  return true;
}
std::vector<int64_t> TensorImpl::getShapeValues() const {
  return net_.graph().tensors[index_].shapeValues;
}

const char* LayerImpl::getName() const { return net_.graph().nodes[index_].name.c_str(); }
bool LayerImpl::setName(const char* name) { return name && net_.renameLayer(index_, name); }
LayerType LayerImpl::getType() const { return net_.graph().nodes[index_].type; }
int32_t LayerImpl::getNbInputs() const {
  return static_cast<int32_t>(net_.graph().nodes[index_].inputs.size());
}
ITensor* LayerImpl::getInput(int32_t i) const {
  return tensorAt(net_, net_.graph().nodes[index_].inputs, i);
}
int32_t LayerImpl::getNbOutputs() const {
  return static_cast<int32_t>(net_.graph().nodes[index_].outputs.size());
}
ITensor* LayerImpl::getOutput(int32_t i) const {
  return tensorAt(net_, net_.graph().nodes[index_].outputs, i);
}

// ---- network ------------------------------------------------------------------------------------

NetworkImpl::~NetworkImpl() {
  // Definition objects are destroyed with the network.
  PhaseScope phase(TracePhase::kTeardown);
  for (GraphNode& node : graph_.nodes) node.plugin.reset();
}

std::nullptr_t NetworkImpl::fail(const Status& status) {
  if (lastError_.isOk()) lastError_ = status;
  logMessage(Severity::kError, status.message());
  return nullptr;
}

int32_t NetworkImpl::resolve(const ITensor& tensor, const char* what) {
  const auto* impl = dynamic_cast<const TensorImpl*>(&tensor);
  if (!impl || &impl->network() != this) {
    fail(invalidArgument(std::string(what) + ": the tensor does not belong to this network"));
    return -1;
  }
  return impl->index();
}

ITensor* NetworkImpl::getTensorHandle(int32_t index) const {
  if (index < 0 || index >= static_cast<int32_t>(tensors_.size())) return nullptr;
  return tensors_[index].get();
}

namespace {

using NameIndex = std::unordered_map<std::string, int32_t>;

// `base`, else base_1, base_2, ...: the first name `names` does not hold.
std::string uniqueName(const NameIndex& names, const std::string& base) {
  std::string name = base;
  for (int i = 1; names.count(name); ++i) name = base + "_" + std::to_string(i);
  return name;
}

// Renames entry `index`, now called `current`, to `name` in `names`: false when `name` is empty
// or another entry's; true (nothing to do) when it is already this entry's.
bool renameEntry(NameIndex& names, int32_t index, std::string& current, const std::string& name) {
  if (name.empty()) return false;
  auto it = names.find(name);
  if (it != names.end()) return it->second == index;
  names.erase(current);
  current = name;
  names[name] = index;
  return true;
}

}  // namespace

std::string NetworkImpl::uniqueLayerName(const std::string& base) {
  return uniqueName(layerNames_, base);
}

std::string NetworkImpl::uniqueTensorName(const std::string& base) {
  return uniqueName(tensorNames_, base);
}

bool NetworkImpl::renameTensor(int32_t index, const std::string& name) {
  return renameEntry(tensorNames_, index, graph_.tensors[index].name, name);
}

bool NetworkImpl::renameLayer(int32_t index, const std::string& name) {
  GraphNode& node = graph_.nodes[index];
  if (!renameEntry(layerNames_, index, node.name, name)) return false;
  if (node.plugin) node.plugin->setLayer(name);  // its errors name the layer
  return true;
}

ITensor* NetworkImpl::addInput(const char* name, DataType type, const Dims& dims) {
  if (!name || !*name) return fail(invalidArgument("addInput: a network input needs a name"));
  if (tensorNames_.count(name)) {
    return fail(invalidArgument(std::string("addInput: tensor name '") + name + "' is taken"));
  }
  if (dataTypeSize(type) == 0) return fail(invalidArgument("addInput: invalid data type"));
  bool valid = dims.nbDims >= 0 && dims.nbDims <= Dims::kMaxDims;
  Dims working = dims;
  for (int32_t k = 0; valid && k < dims.nbDims; ++k) {
    valid = dims.d[k] >= -1;
    if (dims.d[k] == -1) working.d[k] = 1;  // until setWorkingShape says otherwise
  }
  if (!valid) {
    return fail(invalidArgument(std::string("addInput '") + name +
                                "': dims must have rank 0..8, each -1 (dynamic) or at least 0"));
  }
  GraphTensor t;
  t.name = name;
  t.shape = {working, type};
  t.declared = dims;
  t.dimNames.assign(static_cast<size_t>(dims.nbDims), std::string());
  t.isInput = true;
  const int32_t index = static_cast<int32_t>(graph_.tensors.size());
  graph_.tensors.push_back(std::move(t));
  graph_.inputs.push_back(index);
  tensorNames_[name] = index;
  tensors_.push_back(std::make_unique<TensorImpl>(*this, index));
  return tensors_.back().get();
}

Status NetworkImpl::markOutput(ITensor& tensor) {
  const int32_t index = resolve(tensor, "markOutput");
  if (index < 0) return lastError_;
  GraphTensor& t = graph_.tensors[index];
  if (t.isOutput) return Status::ok();
  if (t.isInput || t.constant) {
    return fail(
               invalidArgument("markOutput: '" + t.name +
                               "' is a network input or a constant; add a layer that produces it")),
           lastError_;
  }
  t.isOutput = true;
  graph_.outputs.push_back(index);
  return Status::ok();
}

Status NetworkImpl::setWorkingShape(const char* inputName, const Dims& dims) {
  if (!inputName) return invalidArgument("setWorkingShape: null input name");
  return setWorkingShapes({{inputName, dims}});
}

Status NetworkImpl::setWorkingShapes(const std::map<std::string, Dims>& shapes) {
  // On a copy, so that a shape some layer refuses leaves the network as it was.
  Graph trial = graph_;
  KILN_RETURN_IF_ERROR(specializeGraph(trial, shapes, "setWorkingShape"));
  graph_.tensors = std::move(trial.tensors);
  return Status::ok();
}

int32_t NetworkImpl::addConstantTensor(const Dims& dims, const Weights& weights,
                                       const std::string& name, Status& status) {
  const int64_t count = volume(dims);
  const size_t elem = dataTypeSize(weights.type);
  if (count < 0 || elem == 0) {
    status = invalidArgument(name + ": invalid dims or weight type");
    return -1;
  }
  if (weights.count != count || (count > 0 && !weights.values)) {
    status = invalidArgument(name + ": " + std::to_string(weights.count) + " weights given, " +
                             std::to_string(count) + " needed for the shape");
    return -1;
  }
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(count) * elem);
  if (count) std::memcpy(bytes->data(), weights.values, bytes->size());
  GraphTensor t;
  t.name = uniqueTensorName(name);
  t.shape = {dims, weights.type};
  t.constant = std::move(bytes);
  const int32_t index = static_cast<int32_t>(graph_.tensors.size());
  tensorNames_[t.name] = index;
  graph_.tensors.push_back(std::move(t));
  tensors_.push_back(std::make_unique<TensorImpl>(*this, index));
  return index;
}

ILayer* NetworkImpl::addNode(GraphNode node, const std::vector<TensorShape>& outputs) {
  const int32_t nodeIndex = static_cast<int32_t>(graph_.nodes.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    GraphTensor t;
    t.name =
        uniqueTensorName(node.name + (outputs.size() == 1 ? "_out" : "_out" + std::to_string(i)));
    t.shape = outputs[i];
    t.producer = nodeIndex;
    const int32_t index = static_cast<int32_t>(graph_.tensors.size());
    tensorNames_[t.name] = index;
    graph_.tensors.push_back(std::move(t));
    tensors_.push_back(std::make_unique<TensorImpl>(*this, index));
    node.outputs.push_back(index);
  }
  layerNames_[node.name] = nodeIndex;
  graph_.nodes.push_back(std::move(node));
  layers_.push_back(std::make_unique<LayerImpl>(*this, nodeIndex));
  return layers_.back().get();
}

ILayer* NetworkImpl::addBuiltin(LayerType type, LayerParams params, std::vector<int32_t> inputs) {
  const std::string name =
      uniqueLayerName(std::string(layerTypeName(type)) + "_" + std::to_string(graph_.nodes.size()));
  for (int32_t i : inputs) {
    if (i < 0) return nullptr;  // resolve() already recorded why
  }
  std::vector<TensorShape> in, out;
  for (int32_t i : inputs) in.push_back(graph_.tensors[i].shape);
  Status s = inferLayerOutputs(type, params, in, out);
  if (!s) return fail(s.withContext("layer '" + name + "' (" + layerTypeName(type) + ")"));
  GraphNode node;
  node.type = type;
  node.name = name;
  node.params = std::move(params);
  node.inputs = std::move(inputs);
  return addNode(std::move(node), out);
}

ILayer* NetworkImpl::addConstant(const Dims& dims, const Weights& weights) {
  const std::string name = uniqueLayerName("Constant_" + std::to_string(graph_.nodes.size()));
  Status s;
  const int32_t t = addConstantTensor(dims, weights, name + "_out", s);
  if (t < 0) return fail(s.withContext("addConstant"));
  GraphNode node;
  node.type = LayerType::kCONSTANT;
  node.name = name;
  node.outputs.push_back(t);
  graph_.tensors[t].producer = static_cast<int32_t>(graph_.nodes.size());
  layerNames_[name] = static_cast<int32_t>(graph_.nodes.size());
  graph_.nodes.push_back(std::move(node));
  layers_.push_back(
      std::make_unique<LayerImpl>(*this, static_cast<int32_t>(graph_.nodes.size()) - 1));
  return layers_.back().get();
}

ILayer* NetworkImpl::addConvolution(ITensor& input, const ConvolutionParams& params,
                                    const Weights& kernel, const Weights& bias) {
  const int32_t x = resolve(input, "addConvolution");
  if (x < 0) return nullptr;
  const Dims& in = graph_.tensors[x].shape.dims;
  if (in.nbDims != 4 || params.groups <= 0 || params.outChannels <= 0) {
    return fail(invalidArgument("addConvolution: input '" + graph_.tensors[x].name +
                                "' must be [N,C,H,W] and outChannels, groups positive"));
  }
  const Dims wDims =
      makeDims({params.outChannels, in.d[1] / params.groups, params.kernelH, params.kernelW});
  return addWithWeights(LayerType::kCONVOLUTION, params, x, wDims, params.outChannels, kernel,
                        bias);
}

ILayer* NetworkImpl::addWithWeights(LayerType type, LayerParams params, int32_t x,
                                    const Dims& wDims, int32_t outChannels, const Weights& kernel,
                                    const Weights& bias) {
  const std::string call = std::string("add") + layerTypeName(type);
  const std::string base =
      std::string(layerTypeName(type)) + "_" + std::to_string(graph_.nodes.size());
  Status s;
  const int32_t w = addConstantTensor(wDims, kernel, base + "_kernel", s);
  if (w < 0) return fail(s.withContext(call + " kernel"));
  std::vector<int32_t> inputs{x, w};
  if (bias.count != 0) {
    const int32_t b = addConstantTensor(makeDims({outChannels}), bias, base + "_bias", s);
    if (b < 0) return fail(s.withContext(call + " bias"));
    inputs.push_back(b);
  }
  return addBuiltin(type, std::move(params), std::move(inputs));
}

ILayer* NetworkImpl::addPooling(ITensor& input, const PoolingParams& params) {
  return addBuiltin(LayerType::kPOOLING, params, {resolve(input, "addPooling")});
}

ILayer* NetworkImpl::addElementwise(ITensor& a, ITensor& b, ElementwiseOp op) {
  return addBuiltin(LayerType::kELEMENTWISE, ElementwiseParams{op},
                    {resolve(a, "addElementwise"), resolve(b, "addElementwise")});
}

ILayer* NetworkImpl::addActivation(ITensor& input, const ActivationParams& params) {
  return addBuiltin(LayerType::kACTIVATION, params, {resolve(input, "addActivation")});
}

ILayer* NetworkImpl::addMatrixMultiply(ITensor& a, ITensor& b, const MatrixMultiplyParams& params) {
  return addBuiltin(LayerType::kMATRIX_MULTIPLY, params,
                    {resolve(a, "addMatrixMultiply"), resolve(b, "addMatrixMultiply")});
}

ILayer* NetworkImpl::addGemm(ITensor& a, ITensor& b, ITensor* c, const GemmParams& params) {
  std::vector<int32_t> inputs{resolve(a, "addGemm"), resolve(b, "addGemm")};
  if (c) inputs.push_back(resolve(*c, "addGemm"));
  return addBuiltin(LayerType::kGEMM, params, std::move(inputs));
}

ILayer* NetworkImpl::addFullyConnected(ITensor& input, int32_t nbOutputs, const Weights& kernel,
                                       const Weights& bias) {
  const int32_t x = resolve(input, "addFullyConnected");
  if (x < 0) return nullptr;
  const Dims& in = graph_.tensors[x].shape.dims;
  if (in.nbDims != 2 || nbOutputs <= 0) {
    return fail(invalidArgument("addFullyConnected: input '" + graph_.tensors[x].name +
                                "' must be [N,K] (flatten it with a shuffle first) and "
                                "nbOutputs positive"));
  }
  Status s;
  const std::string base = "FullyConnected_" + std::to_string(graph_.nodes.size());
  const int32_t w = addConstantTensor(makeDims({nbOutputs, in.d[1]}), kernel, base + "_kernel", s);
  if (w < 0) return fail(s.withContext("addFullyConnected kernel"));
  std::vector<int32_t> inputs{x, w};
  if (bias.count != 0) {
    const int32_t b = addConstantTensor(makeDims({nbOutputs}), bias, base + "_bias", s);
    if (b < 0) return fail(s.withContext("addFullyConnected bias"));
    inputs.push_back(b);
  }
  GemmParams p;
  p.transposeB = true;
  return addBuiltin(LayerType::kGEMM, p, std::move(inputs));
}

ILayer* NetworkImpl::addSoftmax(ITensor& input, const SoftmaxParams& params) {
  return addBuiltin(LayerType::kSOFTMAX, params, {resolve(input, "addSoftmax")});
}

ILayer* NetworkImpl::addConcatenation(ITensor* const* inputs, int32_t nbInputs,
                                      const ConcatenationParams& params) {
  if (!inputs || nbInputs <= 0) return fail(invalidArgument("addConcatenation: no inputs"));
  std::vector<int32_t> in;
  for (int32_t i = 0; i < nbInputs; ++i) {
    if (!inputs[i])
      return fail(invalidArgument("addConcatenation: input " + std::to_string(i) + " is null"));
    in.push_back(resolve(*inputs[i], "addConcatenation"));
  }
  return addBuiltin(LayerType::kCONCATENATION, params, std::move(in));
}

ILayer* NetworkImpl::addShuffle(ITensor& input, const ShuffleParams& params) {
  return addBuiltin(LayerType::kSHUFFLE, params, {resolve(input, "addShuffle")});
}

ILayer* NetworkImpl::addShuffleWithDimsOf(ITensor& input, ITensor& dimsSource,
                                          const ShuffleParams& params) {
  return addBuiltin(
      LayerType::kSHUFFLE, params,
      {resolve(input, "addShuffleWithDimsOf"), resolve(dimsSource, "addShuffleWithDimsOf")});
}

ILayer* NetworkImpl::addReduce(ITensor& input, const ReduceParams& params) {
  return addBuiltin(LayerType::kREDUCE, params, {resolve(input, "addReduce")});
}

ILayer* NetworkImpl::addPlugin(ITensor* const* inputs, int32_t nbInputs, const PluginSpec& spec) {
  if (!spec.name || !*spec.name) return fail(invalidArgument("addPlugin: the plugin needs a name"));
  const std::string version = spec.version ? spec.version : "1";
  const std::string ns = spec.pluginNamespace ? spec.pluginNamespace : "";
  const std::string what =
      std::string("plugin ") + spec.name + " version " + version + " namespace '" + ns + "'";
  if (nbInputs < 0 || (nbInputs > 0 && !inputs))
    return fail(invalidArgument("addPlugin: bad inputs"));
  std::vector<int32_t> in;
  for (int32_t i = 0; i < nbInputs; ++i) {
    if (!inputs[i])
      return fail(
          invalidArgument("addPlugin " + what + ": input " + std::to_string(i) + " is null"));
    const int32_t t = resolve(*inputs[i], "addPlugin");
    if (t < 0) return nullptr;
    in.push_back(t);
  }
  IPluginCreator* creator =
      PluginRegistry::global().getCreator(spec.name, version.c_str(), ns.c_str());
  if (!creator) {
    return fail(notFound("addPlugin: " + what +
                         " is not registered; load its library (PluginRegistry::loadLibrary or "
                         "--plugins LIB) or register its creator first"));
  }
  const std::string name =
      uniqueLayerName(std::string(spec.name) + "_" + std::to_string(graph_.nodes.size()));

  PhaseScope phase(TracePhase::kParse);
  std::shared_ptr<PluginObject> plugin;
  Status s = PluginObject::create(*creator, ns, name, spec.fields, plugin);
  if (!s) return fail(s);

  int32_t nbOutputs = 0;
  s = plugin->getNbOutputs(nbOutputs);
  if (!s) return fail(s);
  std::vector<DataType> inTypes;
  std::vector<Dims> inDims;
  for (int32_t t : in) {
    inTypes.push_back(graph_.tensors[t].shape.type);
    inDims.push_back(graph_.tensors[t].shape.dims);
  }
  std::vector<TensorShape> outputs(nbOutputs);
  for (int32_t o = 0; o < nbOutputs; ++o) {
    s = plugin->getOutputDataType(o, inTypes, outputs[o].type);
    if (!s) return fail(s);
    s = plugin->getOutputDimensions(o, inDims, outputs[o].dims);
    if (!s) return fail(s);
  }
  GraphNode node;
  node.type = LayerType::kPLUGIN;
  node.name = name;
  node.inputs = std::move(in);
  node.plugin = std::move(plugin);
  return addNode(std::move(node), outputs);
}

ILayer* NetworkImpl::addSelect(ITensor& condition, ITensor& x, ITensor& y) {
  return addBuiltin(
      LayerType::kSELECT, SelectParams{},
      {resolve(condition, "addSelect"), resolve(x, "addSelect"), resolve(y, "addSelect")});
}

ILayer* NetworkImpl::addCast(ITensor& input, DataType type) {
  return addBuiltin(LayerType::kREFORMAT, ReformatParams{type, TensorFormat::kLINEAR},
                    {resolve(input, "addCast")});
}

ILayer* NetworkImpl::addGather(ITensor& data, ITensor& indices, const GatherParams& params) {
  return addBuiltin(LayerType::kGATHER, params,
                    {resolve(data, "addGather"), resolve(indices, "addGather")});
}

ILayer* NetworkImpl::addSlice(ITensor& input, const SliceParams& params) {
  return addBuiltin(LayerType::kSLICE, params, {resolve(input, "addSlice")});
}

ILayer* NetworkImpl::addPadding(ITensor& input, const PaddingParams& params) {
  return addBuiltin(LayerType::kPADDING, params, {resolve(input, "addPadding")});
}

ILayer* NetworkImpl::addResize(ITensor& input, const ResizeParams& params) {
  return addBuiltin(LayerType::kRESIZE, params, {resolve(input, "addResize")});
}

ILayer* NetworkImpl::addTile(ITensor& input, const TileParams& params) {
  return addBuiltin(LayerType::kTILE, params, {resolve(input, "addTile")});
}

ILayer* NetworkImpl::addExpand(ITensor& input, const ExpandParams& params) {
  return addBuiltin(LayerType::kEXPAND, params, {resolve(input, "addExpand")});
}

ILayer* NetworkImpl::addDeconvolution(ITensor& input, const DeconvolutionParams& params,
                                      const Weights& kernel, const Weights& bias) {
  const int32_t x = resolve(input, "addDeconvolution");
  if (x < 0) return nullptr;
  const Dims& in = graph_.tensors[x].shape.dims;
  if (in.nbDims != 4 || params.groups <= 0 || params.outChannels <= 0 ||
      params.outChannels % params.groups != 0) {
    return fail(invalidArgument("addDeconvolution: input '" + graph_.tensors[x].name +
                                "' must be [N,C,H,W] and outChannels a positive multiple of "
                                "groups"));
  }
  const Dims wDims =
      makeDims({in.d[1], params.outChannels / params.groups, params.kernelH, params.kernelW});
  return addWithWeights(LayerType::kDECONVOLUTION, params, x, wDims, params.outChannels, kernel,
                        bias);
}

ILayer* NetworkImpl::addNormalization(ITensor& input, ITensor& scale, ITensor& bias,
                                      const NormalizationParams& params) {
  return addBuiltin(LayerType::kNORMALIZATION, params,
                    {resolve(input, "addNormalization"), resolve(scale, "addNormalization"),
                     resolve(bias, "addNormalization")});
}

ILayer* NetworkImpl::addLRN(ITensor& input, const LRNParams& params) {
  return addBuiltin(LayerType::kLRN, params, {resolve(input, "addLRN")});
}

ILayer* NetworkImpl::addRoiAlign(ITensor& input, ITensor& rois, ITensor& batchIndices,
                                 const RoiAlignParams& params) {
  return addBuiltin(LayerType::kROI_ALIGN, params,
                    {resolve(input, "addRoiAlign"), resolve(rois, "addRoiAlign"),
                     resolve(batchIndices, "addRoiAlign")});
}

ILayer* NetworkImpl::addBuiltinLayer(LayerType type, const void* params, size_t paramsBytes,
                                     ITensor* const* inputs, int32_t nbInputs) {
  LayerParams p;
  if (!layerParamsFromStruct(type, params, paramsBytes, p)) {
    return fail(invalidArgument(
        std::string("addLayer: ") +
        (isBuiltinOp(type) ? std::string("the parameters of a ") + layerTypeName(type) +
                                 " layer are " + (params ? "not of its parameter struct" : "null")
                           : std::string(layerTypeName(type)) + " is not a built-in op")));
  }
  if (nbInputs < 0 || (nbInputs > 0 && !inputs))
    return fail(invalidArgument("addLayer: bad inputs"));
  std::vector<int32_t> in;
  for (int32_t i = 0; i < nbInputs; ++i) {
    if (!inputs[i])
      return fail(invalidArgument("addLayer: input " + std::to_string(i) + " is null"));
    in.push_back(resolve(*inputs[i], "addLayer"));
  }
  return addBuiltin(type, std::move(p), std::move(in));
}

ILayer* NetworkImpl::getLayer(int32_t index) const {
  if (index < 0 || index >= getNbLayers()) return nullptr;
  return layers_[index].get();
}

ITensor* NetworkImpl::getInput(int32_t index) const {
  if (index < 0 || index >= getNbInputs()) return nullptr;
  return tensors_[graph_.inputs[index]].get();
}

ITensor* NetworkImpl::getOutput(int32_t index) const {
  if (index < 0 || index >= getNbOutputs()) return nullptr;
  return tensors_[graph_.outputs[index]].get();
}

const NetworkImpl* asNetworkImpl(const INetworkDefinition& network) {
  return dynamic_cast<const NetworkImpl*>(&network);
}

std::unique_ptr<INetworkDefinition> createNetwork() { return std::make_unique<NetworkImpl>(); }

}  // namespace kiln
