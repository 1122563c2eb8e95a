// Plugins in the builder: ask supportsFormatCombination() position by position (as TensorRT
// does) for every type/format combination, time each accepted one on a fresh build object
// (clone, configurePlugin and getWorkspaceSize once per profile, initialize, enqueue, terminate),
// count the reformats it would need around it, and keep the fastest. In a profile build only
// profile 0's opt lowering chooses; the other lowerings reuse its choice (lowerChosenPlugin).
#include <limits>

#include "builder/build_session.h"
#include "kiln/plugin_utils.h"
#include "plugin/format_search.h"

namespace kiln {
namespace {

constexpr size_t kMaxCombinations = 64;

std::string describeDesc(const PluginTensorDesc& d) {
  return std::string(dataTypeName(d.type)) + "/" + formatName(d.format);
}

std::string describeCombination(const std::vector<PluginTensorDesc>& descs, size_t nbInputs) {
  std::string s;
  for (size_t i = 0; i < descs.size(); ++i) {
    if (i == nbInputs)
      s += " -> ";
    else if (i)
      s += ", ";
    s += describeDesc(descs[i]);
  }
  return s;
}

}  // namespace

Status BuildSession::enumerateCombinations(const GraphNode& node,
                                           const std::vector<TensorShape>& outputs,
                                           std::vector<Combination>& combinations) {
  const size_t nbIn = node.inputs.size();
  std::vector<TensorShape> shapes;
  for (int32_t g : node.inputs) shapes.push_back(graph_.tensors[g].shape);
  shapes.insert(shapes.end(), outputs.begin(), outputs.end());

  // Options per position: float tensors may be any float type the config allows; others keep
  // their type. Rank-4 tensors may be channels-last.
  std::vector<std::vector<PluginTensorDesc>> options;
  for (const TensorShape& shape : shapes)
    options.push_back(formatOptions(
        {shape.dims, shape.type, TensorFormat::kLINEAR, target_.device()}, config_.allowHalf));

  std::vector<PluginTensorDesc> current;
  for (auto& o : options) current.push_back(o.front());
  // BuilderConfig::pluginCombination: exactly one combination, or a failed build.
  if (!config_.pluginCombination.empty()) {
    if (config_.pluginCombination.size() != shapes.size()) {
      return invalidArgument("layer '" + node.name + "': BuilderConfig::pluginCombination has " +
                             std::to_string(config_.pluginCombination.size()) +
                             " entries but the plugin has " + std::to_string(shapes.size()) +
                             " tensors (inputs then outputs)");
    }
    for (size_t p = 0; p < shapes.size(); ++p) {
      current[p].type = config_.pluginCombination[p].first;
      current[p].format = config_.pluginCombination[p].second;
      if (!node.plugin->supportsFormatCombination(static_cast<int32_t>(p), current,
                                                  static_cast<int32_t>(nbIn))) {
        return unsupported(node.plugin->describe() + ": supportsFormatCombination() refuses " +
                           "position " + std::to_string(p) + " as " + describeDesc(current[p]) +
                           " in the combination forced by BuilderConfig::pluginCombination (" +
                           describeCombination(current, nbIn) + ")");
      }
    }
    combinations.push_back({current});
    return Status::ok();
  }
  searchFormatCombinations(
      *node.plugin, options, static_cast<int32_t>(nbIn),
      [&](const std::vector<PluginTensorDesc>& descs) {
        combinations.push_back({descs});
        return combinations.size() < kMaxCombinations;
      },
      [&](size_t p, const PluginTensorDesc& option) {
        logVerbose("  layer '" + node.name + "': position " + std::to_string(p) + " as " +
                   describeDesc(option) + " rejected by supportsFormatCombination");
      });
  if (combinations.empty()) {
    return unsupported(node.plugin->describe() +
                       ": supportsFormatCombination() accepts no type/format combination for "
                       "these tensors (tried fp32/fp16/bf16, linear and channels-last)");
  }
  return Status::ok();
}

Status BuildSession::reformatCost(const Dims& dims, DataType fromType, TensorFormat fromFormat,
                                  DataType toType, TensorFormat toFormat, double& ms) {
  ms = 0;
  if (fromType == toType && fromFormat == toFormat) return Status::ok();
  std::string key = std::to_string(static_cast<int>(fromType)) + "," +
                    std::to_string(static_cast<int>(fromFormat)) + "," +
                    std::to_string(static_cast<int>(toType)) + "," +
                    std::to_string(static_cast<int>(toFormat));
  for (int32_t i = 0; i < dims.nbDims; ++i) key += "," + std::to_string(dims.d[i]);
  if (auto it = reformatTimes_.find(key); it != reformatTimes_.end()) {
    ms = it->second;
    return Status::ok();
  }
  KernelConfig config;
  config.type = LayerType::kREFORMAT;
  config.params = ReformatParams{toType, toFormat};
  config.inputs = {PluginTensorDesc{dims, fromType, fromFormat, target_.device()}};
  config.outputs = {PluginTensorDesc{dims, toType, toFormat, target_.device()}};
  config.constantInputs = {nullptr};
  KernelPtr kernel;
  std::string why;
  for (const Tactic& tactic : target_.backend->tactics(LayerType::kREFORMAT)) {
    if ((kernel = tactic.create(config, &why))) break;
  }
  if (!kernel) {
    ms = std::numeric_limits<double>::infinity();  // this combination cannot be connected
    reformatTimes_[key] = ms;
    return Status::ok();
  }
  Timer* clock = nullptr;
  KILN_RETURN_IF_ERROR(timer(clock));
  std::unique_ptr<IDeviceBuffer> in, out, workspace;
  KILN_RETURN_IF_ERROR(timingBuffer(config.inputs[0], nullptr, in));
  KILN_RETURN_IF_ERROR(target_.backend->allocate(
      static_cast<size_t>(plan::tensorBytes(dims, toType)), "a reformat timing output", out));
  KILN_RETURN_IF_ERROR(
      target_.backend->allocate(kernel->workspaceSize(), "a timing workspace", workspace));
  const void* ins[] = {in->data()};
  void* outs[] = {out->data()};
  KILN_RETURN_IF_ERROR(clock->median(
      config_.warmupRuns, config_.timingRuns,
      [&] { return kernel->run(ins, outs, workspace->data(), clock->context()); }, ms));
  reformatTimes_[key] = ms;
  return Status::ok();
}

std::vector<std::vector<DynamicPluginTensorDesc>> BuildSession::pluginProfileDescs(
    const GraphNode& node, const Combination& combination) const {
  std::vector<std::vector<DynamicPluginTensorDesc>> out;
  auto box = pluginBoxes_.find(node.name);
  if (box == pluginBoxes_.end()) {
    std::vector<DynamicPluginTensorDesc> one;
    for (const PluginTensorDesc& d : combination.descs) one.push_back(staticPluginTensorDesc(d));
    out.push_back(std::move(one));
    return out;
  }
  for (const auto& profile : box->second) {
    std::vector<DynamicPluginTensorDesc> descs;
    for (size_t i = 0; i < combination.descs.size() && i < profile.size(); ++i) {
      const auto& [min, opt, max] = profile[i];
      descs.push_back(boxDesc(combination.descs[i], min, opt, max));
    }
    out.push_back(std::move(descs));
  }
  return out;
}

Status BuildSession::timePluginCandidate(const GraphNode& node, const Combination& combination,
                                         std::shared_ptr<PluginObject>& object, double& ms,
                                         std::vector<uint64_t>& workspace) {
  const size_t nbIn = node.inputs.size();
  const std::vector<PluginTensorDesc> inputs(combination.descs.begin(),
                                             combination.descs.begin() + nbIn);
  const std::vector<PluginTensorDesc> outputs(combination.descs.begin() + nbIn,
                                              combination.descs.end());
  KILN_RETURN_IF_ERROR(node.plugin->clone(object));
  // Once per profile, in profile order (DESIGN.md §7): the object serialized at the end must
  // serve every profile's box.
  workspace.clear();
  const auto profiles = pluginProfileDescs(node, combination);
  for (size_t p = 0; p < profiles.size(); ++p) {
    const std::vector<DynamicPluginTensorDesc> in(profiles[p].begin(), profiles[p].begin() + nbIn);
    const std::vector<DynamicPluginTensorDesc> out(profiles[p].begin() + nbIn, profiles[p].end());
    KILN_RETURN_IF_ERROR(object->configure(in, out));
    size_t bytes = 0;
    KILN_RETURN_IF_ERROR(object->getWorkspaceSize(in, out, bytes));
    if (bytes > config_.maxWorkspaceBytes) {
      return unsupported(
          object->describe() + " asks for " + std::to_string(bytes) + " workspace bytes" +
          (profiles.size() > 1 ? " for profile " + std::to_string(p) : "") +
          ", more than the builder's limit of " + std::to_string(config_.maxWorkspaceBytes));
    }
    workspace.push_back(bytes);
  }
  KILN_RETURN_IF_ERROR(object->initialize());
  // From here the object is initialized: terminate() it whatever the timing gives (guarantee 2).
  // It is timed at this session's shapes, profile 0's opt: its first box holds them.
  Status s = timePluginEnqueue(node, *object, inputs, outputs, workspace[0], ms);
  Status t = object->terminate();
  KILN_RETURN_IF_ERROR(s);
  return t;
}

Status BuildSession::timePluginEnqueue(const GraphNode& node, PluginObject& object,
                                       const std::vector<PluginTensorDesc>& inputs,
                                       const std::vector<PluginTensorDesc>& outputs,
                                       uint64_t workspace, double& ms) {
  Timer* clock = nullptr;
  KILN_RETURN_IF_ERROR(timer(clock));
  std::vector<std::unique_ptr<IDeviceBuffer>> buffers;
  std::vector<const void*> inPtrs;
  std::vector<void*> outPtrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // A constant input is timed with its real values when the plugin takes it as it is stored.
    const GraphTensor& t = graph_.tensors[node.inputs[i]];
    const bool asStored =
        t.constant && t.shape.type == inputs[i].type && inputs[i].format == TensorFormat::kLINEAR;
    buffers.emplace_back();
    KILN_RETURN_IF_ERROR(
        timingBuffer(inputs[i], asStored ? t.constant->data() : nullptr, buffers.back()));
    inPtrs.push_back(buffers.back()->data());
  }
  for (const PluginTensorDesc& d : outputs) {
    buffers.emplace_back();
    KILN_RETURN_IF_ERROR(
        target_.backend->allocate(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)),
                                  "a plugin timing output", buffers.back()));
    outPtrs.push_back(buffers.back()->data());
  }
  std::unique_ptr<IDeviceBuffer> scratch;
  KILN_RETURN_IF_ERROR(target_.backend->allocate(workspace, "a plugin workspace", scratch));
  void* stream = clock->context().stream;
  return clock->median(
      config_.warmupRuns, config_.timingRuns,
      [&] {
        return object.enqueue(inputs.data(), static_cast<int32_t>(inputs.size()), outputs.data(),
                              static_cast<int32_t>(outputs.size()), inPtrs.data(), outPtrs.data(),
                              scratch->data(), stream);
      },
      ms);
}

Status BuildSession::lowerChosenPlugin(const GraphNode& node) {
  const BuildStep* from = nullptr;
  for (const BuildStep& s : pluginChoices_->steps_)
    if (s.type == LayerType::kPLUGIN && s.name == node.name) from = &s;
  if (!from || from->inputs.size() != node.inputs.size() ||
      from->outputs.size() != node.outputs.size() ||
      pluginProfile_ >= from->profileWorkspaceBytes.size())
    return internalError("layer '" + node.name +
                         "': the plugin layer is not the same in every lowering of the profiles");
  BuildStep step;
  step.type = LayerType::kPLUGIN;
  step.name = node.name;
  step.definition = node.plugin;
  step.tactic = "plugin";
  step.chosen = from->chosen;
  step.medianMs = from->medianMs;
  step.profileWorkspaceBytes = from->profileWorkspaceBytes;
  step.workspaceBytes = from->profileWorkspaceBytes[pluginProfile_];
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const BuildTensor& chosen = pluginChoices_->tensors_[from->inputs[i]];
    int32_t b = -1;
    KILN_RETURN_IF_ERROR(want(node.inputs[i], chosen.type, chosen.format, b));
    step.inputs.push_back(b);
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const BuildTensor& chosen = pluginChoices_->tensors_[from->outputs[o]];
    BuildTensor t;
    t.dims = graph_.tensors[node.outputs[o]].shape.dims;
    t.type = chosen.type;
    t.format = chosen.format;
    step.outputs.push_back(addNodeOutput(node.outputs[o], std::move(t)));
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

Status BuildSession::lowerPlugin(const GraphNode& node) {
  PhaseScope phase(TracePhase::kBuild);
  if (pluginChoices_) return lowerChosenPlugin(node);
  const size_t nbIn = node.inputs.size();
  std::vector<TensorShape> outputs;
  for (int32_t g : node.outputs) outputs.push_back(graph_.tensors[g].shape);

  std::vector<Combination> combinations;
  KILN_RETURN_IF_ERROR(enumerateCombinations(node, outputs, combinations));

  BuildStep step;
  step.type = LayerType::kPLUGIN;
  step.name = node.name;
  step.definition = node.plugin;
  step.tactic = "plugin";
  double bestTotal = std::numeric_limits<double>::infinity();
  size_t best = 0;
  for (size_t c = 0; c < combinations.size(); ++c) {
    const auto& descs = combinations[c].descs;
    plan::Candidate candidate;
    candidate.name = describeCombination(descs, nbIn);
    // Reformats this combination needs: into the plugin from where its inputs live, and out of it
    // into what the built-in layers downstream compute in (FP32 linear for float tensors).
    double around = 0;
    for (size_t i = 0; i < nbIn; ++i) {
      const BuildTensor& from = tensors_[home_[node.inputs[i]]];
      double ms = 0;
      KILN_RETURN_IF_ERROR(
          reformatCost(from.dims, from.type, from.format, descs[i].type, descs[i].format, ms));
      around += ms;
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const PluginTensorDesc& d = descs[nbIn + o];
      const DataType downstream = isFloatType(outputs[o].type) ? DataType::kFLOAT : outputs[o].type;
      double ms = 0;
      KILN_RETURN_IF_ERROR(
          reformatCost(d.dims, d.type, d.format, downstream, TensorFormat::kLINEAR, ms));
      around += ms;
    }
    if (around == std::numeric_limits<double>::infinity()) {
      candidate.rejectedBecause = "no reformat can connect it to its neighbours";
      logVerbose("  layer '" + node.name + "': " + candidate.name +
                 " rejected: " + candidate.rejectedBecause);
      step.candidates.push_back(std::move(candidate));
      continue;
    }
    std::shared_ptr<PluginObject> object;
    double ms = 0;
    std::vector<uint64_t> workspace;
    Status s = timePluginCandidate(node, combinations[c], object, ms, workspace);
    if (!s) {
      // Guarantee 8: a failing plugin call fails the build. Build objects made so far are
      // released (terminate if initialized, then destroy) as the stack unwinds.
      return s;
    }
    candidate.medianMs = ms + around;
    logVerbose("  layer '" + node.name + "': " + candidate.name + " " + std::to_string(ms) +
               " ms + reformats " + std::to_string(around) + " ms");
    if (candidate.medianMs < bestTotal) {
      bestTotal = candidate.medianMs;
      best = c;
      step.chosen = std::move(object);  // the previous best is destroyed here
      step.medianMs = ms;
      step.workspaceBytes = workspace[0];
      step.profileWorkspaceBytes = workspace;
    }
    step.candidates.push_back(std::move(candidate));
  }
  if (!step.chosen) {
    return unsupported(node.plugin->describe() + ": no combination can be used");
  }
  const auto& chosen = combinations[best].descs;
  logVerbose("layer '" + node.name + "' (plugin " + node.plugin->name() + "): chose " +
             describeCombination(chosen, nbIn) + " at " + std::to_string(bestTotal) + " ms");

  for (size_t i = 0; i < nbIn; ++i) {
    int32_t b = -1;
    KILN_RETURN_IF_ERROR(want(node.inputs[i], chosen[i].type, chosen[i].format, b));
    step.inputs.push_back(b);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    BuildTensor t;
    t.dims = outputs[o].dims;
    t.type = chosen[nbIn + o].type;
    t.format = chosen[nbIn + o].format;
    step.outputs.push_back(addNodeOutput(node.outputs[o], std::move(t)));
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

}  // namespace kiln
