// Type and format negotiation: every built-in layer computes in FP32 (integer types where the
// layer is exact on them; FP16 where the builder asks for half and a kernel takes it) over the
// formats format_choice.h decides (linear, or channels-last for a CNN on the GPU); plugins pick
// among the combinations they support; reformat steps go wherever a tensor's producer and
// consumer disagree.
#include "builder/build_session.h"
#include "builder/format_choice.h"
#include "builder/half_constants.h"
#include "core/aligned_buffer.h"
#include "core/log.h"
#include "ops/op_table.h"

namespace kiln {

BuildSession::BuildSession(const Graph& graph, const BuilderConfig& config, BuildTarget target)
    : graph_(graph), config_(config), target_(std::move(target)), rng_(std::random_device{}()) {}

BuildSession::~BuildSession() {
  PhaseScope phase(TracePhase::kBuild);
  for (BuildStep& step : steps_) step.chosen.reset();
}

void BuildSession::logVerbose(const std::string& message) const {
  if (config_.verbose) logMessage(Severity::kInfo, message);
}

std::string BuildSession::uniqueName(const std::string& base) {
  int& n = names_[base];
  std::string name = n == 0 ? base : base + "#" + std::to_string(n);
  ++n;
  while (names_.count(name) && name != base) name += "_";
  names_[name];
  return name;
}

int32_t BuildSession::addTensor(BuildTensor tensor) {
  tensors_.push_back(std::move(tensor));
  return static_cast<int32_t>(tensors_.size()) - 1;
}

int32_t BuildSession::addNodeOutput(int32_t g, BuildTensor tensor) {
  tensor.name = uniqueName(graph_.tensors[g].name);
  const int32_t b = addTensor(std::move(tensor));
  home_[g] = b;
  return b;
}

Status BuildSession::lower() {
  // Everything given is built: the passes (passes/pipeline.h) already removed what no output
  // needs.
  home_.assign(graph_.tensors.size(), -1);
  channelsLastNodes_.assign(graph_.nodes.size(), false);
  for (size_t g = 0; g < graph_.tensors.size(); ++g) {
    const GraphTensor& t = graph_.tensors[g];
    if (!t.isInput && !t.constant) continue;
    BuildTensor b;
    b.name = uniqueName(t.name);
    b.dims = t.shape.dims;
    b.type = t.shape.type;
    b.kind = t.isInput ? plan::TensorKind::kINPUT : plan::TensorKind::kCONSTANT;
    b.constant = t.constant;
    home_[g] = addTensor(std::move(b));
  }

  int32_t layers = 0, lowered = 0;
  for (const GraphNode& node : graph_.nodes) layers += node.type != LayerType::kCONSTANT;
  for (size_t n = 0; n < graph_.nodes.size(); ++n) {
    const GraphNode& node = graph_.nodes[n];
    if (node.type == LayerType::kCONSTANT) continue;
    Status s = node.type == LayerType::kPLUGIN ? lowerPlugin(node) : lowerBuiltin(node);
    if (!s) return s.withContext("layer '" + node.name + "'");
    KILN_RETURN_IF_ERROR(reportProgress("layers", ++lowered, layers, node.name));
  }

  // Network outputs are handed to the caller in their logical type, linear, under their name.
  for (int32_t g : graph_.outputs) {
    const GraphTensor& t = graph_.tensors[g];
    int32_t b = -1;
    KILN_RETURN_IF_ERROR(want(g, t.shape.type, TensorFormat::kLINEAR, b));
    BuildTensor& out = tensors_[b];
    if (out.kind != plan::TensorKind::kACTIVATION) {
      return unsupported("network output '" + t.name +
                         "' is a network input or constant seen through a layer that moves no "
                         "data; add a layer that computes it");
    }
    out.kind = plan::TensorKind::kOUTPUT;
    outputTensors_.push_back(b);
    if (out.name != t.name) {
      // The home variant had the name; give it to the variant the caller sees.
      for (BuildTensor& other : tensors_) {
        if (other.name == t.name) other.name = uniqueName(t.name + "/internal");
      }
      out.name = t.name;
    }
  }
  return Status::ok();
}

Status BuildSession::want(int32_t g, DataType type, TensorFormat format, int32_t& out) {
  const int32_t h = home_[g];
  if (h < 0) return internalError("tensor '" + graph_.tensors[g].name + "' used before it is made");
  if (tensors_[h].type == type && tensors_[h].format == format) {
    out = h;
    return Status::ok();
  }
  const auto key = std::make_tuple(g, type, format);
  if (auto it = variants_.find(key); it != variants_.end()) {
    out = it->second;
    return Status::ok();
  }
  const BuildTensor& from = tensors_[h];
  BuildTensor to;
  to.name = uniqueName(from.name + "/" + dataTypeName(type) + "_" + formatName(format));
  to.dims = from.dims;
  to.type = type;
  to.format = format;

  BuildStep step;
  step.type = LayerType::kREFORMAT;
  step.name = uniqueName("reformat(" + from.name + ")");
  step.params = ReformatParams{type, format};
  step.inputs = {h};

  if (from.kind == plan::TensorKind::kCONSTANT) {
    // Weights are converted once here rather than on every run.
    // On the host, whatever the target: weights live in host memory until the engine loads.
    KernelConfig config;
    config.type = LayerType::kREFORMAT;
    config.params = step.params;
    config.inputs = {PluginTensorDesc{from.dims, from.type, from.format, DeviceKind::kCPU}};
    config.outputs = {PluginTensorDesc{to.dims, type, format, DeviceKind::kCPU}};
    config.constantInputs = {from.constant->data()};
    std::string why;
    KernelPtr kernel;
    for (const Tactic& tactic : cpuBackend().tactics(LayerType::kREFORMAT)) {
      if ((kernel = tactic.create(config, &why))) break;
    }
    if (!kernel) return unsupported("cannot convert constant '" + from.name + "': " + why);
    const int64_t bytes = plan::tensorBytes(to.dims, type);
    auto data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes));
    AlignedBuffer workspace(kernel->workspaceSize());
    const void* in[] = {from.constant->data()};
    void* outs[] = {data->data()};
    KILN_RETURN_IF_ERROR(kernel->run(in, outs, workspace.data(), RunContext{}));
    // Finite FP32 values beyond FP16's range become +-65504 (half_constants.h).
    if (from.type == DataType::kFLOAT && type == DataType::kHALF && from.format == format) {
      const size_t clamped =
          clampHalfOverflows(reinterpret_cast<const float*>(from.constant->data()),
                             reinterpret_cast<uint16_t*>(data->data()), data->size() / 2);
      if (clamped > 0)
        logMessage(Severity::kWarning, "constant '" + from.name + "': " + std::to_string(clamped) +
                                           " value(s) beyond FP16's range clamped to +-65504");
    }
    to.kind = plan::TensorKind::kCONSTANT;
    to.constant = std::move(data);
    out = addTensor(std::move(to));
  } else {
    out = addTensor(std::move(to));
    step.outputs = {out};
    steps_.push_back(std::move(step));
  }
  variants_[key] = out;
  return Status::ok();
}

void BuildSession::preferHalf(const GraphNode& node, std::vector<DataType>& types) {
  // Every FP32 input becomes FP16, if some kernel of the target takes the layer that way.
  if (node.type == LayerType::kREFORMAT) return;  // a cast in the network keeps its types
  KernelConfig config;
  config.type = node.type;
  config.params = node.params;
  std::vector<TensorShape> shapes;
  bool any = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const GraphTensor& g = graph_.tensors[node.inputs[i]];
    const DataType t = types[i] == DataType::kFLOAT ? DataType::kHALF : types[i];
    any = any || t != types[i];
    config.inputs.push_back({g.shape.dims, t, TensorFormat::kLINEAR, target_.device()});
    config.constantInputs.push_back(g.constant ? g.constant->data() : nullptr);
    shapes.push_back({g.shape.dims, t});
  }
  std::vector<TensorShape> outputs;
  if (!any || !inferLayerOutputs(node.type, node.params, shapes, outputs)) return;
  for (const TensorShape& o : outputs)
    config.outputs.push_back({o.dims, o.type, TensorFormat::kLINEAR, target_.device()});
  // Constants are converted at build time; the probe only needs their presence, not FP16 bytes.
  if (!accepts(config)) {
    logVerbose("  layer '" + node.name + "': no " + target_.backend->name() +
               " kernel takes it in fp16; it stays fp32");
    return;
  }
  for (DataType& t : types) {
    if (t == DataType::kFLOAT) t = DataType::kHALF;
  }
}

FormatCandidate BuildSession::chooseFormats(const GraphNode& node,
                                            const std::vector<DataType>& types,
                                            const std::vector<TensorShape>& inputs,
                                            const std::vector<TensorShape>& outputs) {
  FormatQuery q;
  q.type = node.type;
  q.device = target_.device();
  q.inputTypes = types;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int32_t g = node.inputs[i];
    q.inputDims.push_back(inputs[i].dims);
    q.inputConstant.push_back(graph_.tensors[g].constant != nullptr);
    q.inputFormats.push_back(home_[g] >= 0 ? tensors_[home_[g]].format : TensorFormat::kLINEAR);
  }
  for (const TensorShape& o : outputs) {
    q.outputTypes.push_back(o.type);
    q.outputDims.push_back(o.dims);
  }
  std::vector<FormatCandidate> candidates = formatCandidates(q);
  const size_t index = static_cast<size_t>(&node - graph_.nodes.data());
  if (index < forceLinear_.size() && forceLinear_[index] && candidates.size() > 1) {
    logVerbose("  layer '" + node.name + "': linear (a format alternative timed across the graph)");
    return candidates.back();
  }
  for (size_t c = 0; c + 1 < candidates.size(); ++c) {
    KernelConfig config;
    config.type = node.type;
    config.params = node.params;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const GraphTensor& g = graph_.tensors[node.inputs[i]];
      config.inputs.push_back({inputs[i].dims, types[i], candidates[c].inputs[i], q.device});
      // Constants as the kernel will get them: the probe needs their presence, not their bytes
      // in this type and format (want() converts them at build time).
      config.constantInputs.push_back(g.constant ? g.constant->data() : nullptr);
    }
    for (size_t o = 0; o < outputs.size(); ++o)
      config.outputs.push_back(
          {outputs[o].dims, outputs[o].type, candidates[c].outputs[o], q.device});
    if (accepts(config)) {
      logVerbose("  layer '" + node.name + "': " + candidates[c].what);
      return candidates[c];
    }
    logVerbose("  layer '" + node.name + "': no " + target_.backend->name() + " kernel takes it " +
               candidates[c].what);
  }
  return candidates.back();
}

Status BuildSession::lowerBuiltin(const GraphNode& node) {
  // Inputs in the types the layer computes in: its op's type rule, given what they are now.
  std::vector<DataType> types;
  for (int32_t g : node.inputs)
    types.push_back(home_[g] >= 0 ? tensors_[home_[g]].type : graph_.tensors[g].shape.type);
  std::string why;
  if (!ops::computeTypes(node.type, node.params, types, why)) return unsupported(why);
  if (config_.builtinHalf) preferHalf(node, types);
  std::vector<TensorShape> shapes;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    shapes.push_back({graph_.tensors[node.inputs[i]].shape.dims, types[i]});
  std::vector<TensorShape> outputs;
  KILN_RETURN_IF_ERROR(inferLayerOutputs(node.type, node.params, shapes, outputs));
  if (outputs.size() != node.outputs.size()) return internalError("output count changed");
  const FormatCandidate formats = chooseFormats(node, types, shapes, outputs);
  bool channelsLast = false;
  for (const auto* list : {&formats.inputs, &formats.outputs})
    for (TensorFormat f : *list) channelsLast = channelsLast || f == TensorFormat::kCHANNELS_LAST;
  channelsLastNodes_[static_cast<size_t>(&node - graph_.nodes.data())] = channelsLast;
  std::vector<int32_t> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    int32_t b = -1;
    KILN_RETURN_IF_ERROR(want(node.inputs[i], types[i], formats.inputs[i], b));
    inputs.push_back(b);
  }
  BuildStep step;
  step.type = node.type;
  step.name = node.name;
  step.params = node.params;
  step.inputs = std::move(inputs);
  for (size_t o = 0; o < outputs.size(); ++o) {
    BuildTensor t;
    t.dims = outputs[o].dims;
    t.type = outputs[o].type;
    t.format = formats.outputs[o];
    step.outputs.push_back(addNodeOutput(node.outputs[o], std::move(t)));
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

}  // namespace kiln
