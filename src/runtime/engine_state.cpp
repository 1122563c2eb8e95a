#include "runtime/engine_state.h"

#include "kiln/plugin_utils.h"
#include "kiln/registry.h"
#include "ops/op_table.h"
#include "runtime/workspace_placement.h"

namespace kiln {
namespace {

std::string stepWhere(const plan::Step& step, size_t index) {
  return "plan step " + std::to_string(index) + " (layer '" + step.layerName + "', " +
         layerTypeName(step.type) + ")";
}

PluginTensorDesc descOf(const plan::Tensor& t, DeviceKind device) {
  return PluginTensorDesc{t.dims, t.type, t.format, device};
}

// Every step reads only tensors that exist by then and writes only its own activations/outputs.
Status checkWiring(const plan::Plan& plan) {
  std::vector<bool> ready(plan.tensors.size(), false);
  for (size_t t = 0; t < plan.tensors.size(); ++t) {
    const auto kind = plan.tensors[t].kind;
    ready[t] = kind == plan::TensorKind::kINPUT || kind == plan::TensorKind::kCONSTANT;
  }
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step& step = plan.steps[s];
    for (int32_t i : step.inputs) {
      if (!ready[i]) {
        return corruptData(stepWhere(step, s) + " reads tensor '" + plan.tensors[i].name +
                           "' before any step writes it; the plan is corrupted, rebuild it");
      }
    }
    for (int32_t o : step.outputs) {
      const auto kind = plan.tensors[o].kind;
      if (kind != plan::TensorKind::kACTIVATION && kind != plan::TensorKind::kOUTPUT) {
        return corruptData(stepWhere(step, s) + " writes into input or constant tensor '" +
                           plan.tensors[o].name + "'; the plan is corrupted, rebuild it");
      }
      if (ready[o]) {
        return corruptData(stepWhere(step, s) + " writes tensor '" + plan.tensors[o].name +
                           "' that is already written; the plan is corrupted, rebuild it");
      }
      ready[o] = true;
    }
  }
  for (int32_t o : plan.outputs) {
    if (!ready[o]) {
      return corruptData("network output '" + plan.tensors[o].name +
                         "' is written by no step; the plan is corrupted, rebuild it");
    }
  }
  return Status::ok();
}

Status makeBuiltinKernel(const plan::Plan& plan, const Backend& backend, const plan::Step& step,
                         size_t index, EngineStep& out) {
  // Shapes recorded in the plan must be what inference says, so a kernel can trust them.
  std::vector<TensorShape> in, inferred;
  for (int32_t i : step.inputs) in.push_back({plan.tensors[i].dims, plan.tensors[i].type});
  Status s = inferLayerOutputs(step.type, step.params, in, inferred);
  if (!s) return corruptData(stepWhere(step, index) + ": " + s.message());
  if (inferred.size() != step.outputs.size()) {
    return corruptData(stepWhere(step, index) + ": wrong number of outputs");
  }
  for (size_t o = 0; o < inferred.size(); ++o) {
    const plan::Tensor& t = plan.tensors[step.outputs[o]];
    if (inferred[o].dims != t.dims || inferred[o].type != t.type) {
      return corruptData(stepWhere(step, index) + ": output '" + t.name +
                         "' does not have the shape or type its inputs give");
    }
  }
  std::vector<Dims> dims;
  for (const plan::Tensor& t : plan.tensors) dims.push_back(t.dims);
  return makeStepKernel(plan, backend, step, index, dims, step.tactic, out);
}

// The engine object of a plugin step, checked against the plan at its recorded dims and
// initialized; `workspace` grows to what it asks for there (static plans: their one shape; a
// profile plan's workspace is asked per profile by prepareProfiles).
Status makePluginStep(const plan::Plan& plan, DeviceKind device, const plan::Step& step,
                      size_t index, EngineStep& out, uint64_t& workspace) {
  const plan::PluginRecord& record = plan.plugins[step.pluginIndex];
  const std::string what = "plugin " + record.name + " version " + record.version + " namespace '" +
                           record.pluginNamespace + "' (layer '" + step.layerName + "')";
  IPluginCreator* creator = PluginRegistry::global().getCreator(
      record.name.c_str(), record.version.c_str(), record.pluginNamespace.c_str());
  if (!creator) {
    std::string how = record.libraryName.empty()
                          ? "register its creator before loading the plan"
                          : "load its library first: --plugins " + record.libraryName +
                                " on the command line, or PluginRegistry::loadLibrary(\"" +
                                record.libraryName + "\")";
    return notFound(what + " is not registered" +
                    (record.libraryName.empty()
                         ? std::string()
                         : " (the plan was built with it from library " + record.libraryName +
                               ", hash " + record.libraryHash + ")") +
                    "; " + how);
  }
  KILN_RETURN_IF_ERROR(PluginObject::deserialize(*creator, record.pluginNamespace, step.layerName,
                                                 record.data.data(), record.data.size(),
                                                 out.plugin));
  for (int32_t i : step.inputs) out.inputs.push_back(descOf(plan.tensors[i], device));
  for (int32_t o : step.outputs) out.outputs.push_back(descOf(plan.tensors[o], device));

  // The plugin must agree with the plan on outputs and formats, so enqueue() writes exactly the
  // buffers the plan sized for it.
  int32_t nbOutputs = 0;
  KILN_RETURN_IF_ERROR(out.plugin->getNbOutputs(nbOutputs));
  if (nbOutputs != static_cast<int32_t>(step.outputs.size())) {
    return corruptData(stepWhere(step, index) + ": " + what + " has " + std::to_string(nbOutputs) +
                       " outputs, the plan " + std::to_string(step.outputs.size()));
  }
  std::vector<Dims> inDims;
  std::vector<DataType> inTypes;
  for (const PluginTensorDesc& d : out.inputs) {
    inDims.push_back(d.dims);
    inTypes.push_back(d.type);
  }
  for (int32_t o = 0; o < nbOutputs; ++o) {
    Dims dims;
    KILN_RETURN_IF_ERROR(out.plugin->getOutputDimensions(o, inDims, dims));
    if (dims != out.outputs[o].dims) {
      return corruptData(stepWhere(step, index) + ": " + what + " gives output " +
                         std::to_string(o) + " a shape other than the plan's");
    }
  }
  std::vector<PluginTensorDesc> all = out.inputs;
  all.insert(all.end(), out.outputs.begin(), out.outputs.end());
  for (size_t p = 0; p < all.size(); ++p) {
    if (!out.plugin->supportsFormatCombination(static_cast<int32_t>(p), all,
                                               static_cast<int32_t>(out.inputs.size()))) {
      return corruptData(stepWhere(step, index) + ": " + what + " does not support the " +
                         dataTypeName(all[p].type) + "/" + formatName(all[p].format) +
                         " recorded for tensor position " + std::to_string(p));
    }
  }
  if (plan.profiles.empty()) {
    std::vector<DynamicPluginTensorDesc> in, outs;
    for (const PluginTensorDesc& d : out.inputs) in.push_back(staticPluginTensorDesc(d));
    for (const PluginTensorDesc& d : out.outputs) outs.push_back(staticPluginTensorDesc(d));
    size_t bytes = 0;
    KILN_RETURN_IF_ERROR(out.plugin->getWorkspaceSize(in, outs, bytes));
    workspace = std::max<uint64_t>(workspace, bytes);
  }
  return out.plugin->initialize();
}

}  // namespace

Status makeStepKernel(const plan::Plan& plan, const Backend& backend, const plan::Step& step,
                      size_t index, const std::vector<Dims>& dims, const std::string& tacticName,
                      EngineStep& out) {
  const DeviceKind device = backend.getKind();
  KernelConfig config;
  config.type = step.type;
  config.params = step.params;
  for (int32_t i : step.inputs) {
    const plan::Tensor& t = plan.tensors[i];
    config.inputs.push_back({dims[i], t.type, t.format, device});
    config.constantInputs.push_back(
        t.kind == plan::TensorKind::kCONSTANT ? plan.weights[t.weightIndex]->data() : nullptr);
  }
  for (int32_t o : step.outputs) {
    const plan::Tensor& t = plan.tensors[o];
    config.outputs.push_back({dims[o], t.type, t.format, device});
  }
  std::string why;
  const Tactic* tactic = ops::findTactic(backend.tactics(step.type), tacticName);
  if (!tactic) {
    return corruptData(stepWhere(step, index) + " names tactic '" + tacticName +
                       "', which this kiln's " + backend.name() +
                       " backend does not have; rebuild the plan");
  }
  out.kernel = tactic->create(config, &why);
  if (!out.kernel) {
    return corruptData(stepWhere(step, index) + ": tactic '" + tacticName +
                       "' rejects the configuration: " + why);
  }
  out.inputs = std::move(config.inputs);
  out.outputs = std::move(config.outputs);
  return Status::ok();
}

EngineState::~EngineState() {
  PhaseScope phase(TracePhase::kTeardown);
  steps.clear();
}

Status buildEngineState(plan::Plan plan, std::shared_ptr<EngineState>& out) {
  const Backend* backend = nullptr;
  int32_t deviceIndex = -1;
  KILN_RETURN_IF_ERROR(backendForPlanTarget(plan.target, backend));
  KILN_RETURN_IF_ERROR(backend->openPlanTarget(plan.target, deviceIndex));
  const DeviceKind device = backend->getKind();
  KILN_RETURN_IF_ERROR(checkWiring(plan));
  // The arena can never need more than every activation in its own slot; a larger figure is
  // damage, and would make each context allocate it.
  uint64_t naive = 0;
  for (const plan::Tensor& t : plan.tensors) {
    if (t.kind == plan::TensorKind::kACTIVATION) {
      naive += (static_cast<uint64_t>(plan::tensorBytes(t.dims, t.type)) + 63) / 64 * 64 + 64;
    }
  }
  // (A profile plan's arena is planned at its max shapes: prepareProfiles checks it there.)
  if (plan.profiles.empty() && plan.arenaBytes > naive) {
    return corruptData("the plan's activation arena (" + std::to_string(plan.arenaBytes) +
                       " bytes) is larger than all its activations together; the plan is "
                       "corrupted, rebuild it");
  }
  auto state = std::make_shared<EngineState>();
  state->backend = backend;
  state->deviceIndex = deviceIndex;
  // Scratch memory is sized from what the kernels and plugins ask for now, not from the plan's
  // record of it.
  state->workspaceBytes = 0;
  state->steps.resize(plan.steps.size());
  std::vector<uint64_t> kernelWorkspace(plan.steps.size(), 0);
  {
    PhaseScope phase(TracePhase::kDeserialize);
    // A profile plan's kernels are made per set of input shapes (prepareProfiles makes them at
    // every corner, which checks them): making them here too, at the recorded dims, would only
    // repeat profile 0's opt. Its plugins' engine objects serve every shape, so they are made
    // here.
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const plan::Step& step = plan.steps[s];
      if (!plan.profiles.empty() && step.type != LayerType::kPLUGIN) continue;
      Status status =
          step.type == LayerType::kPLUGIN
              ? makePluginStep(plan, device, step, s, state->steps[s], state->workspaceBytes)
              : makeBuiltinKernel(plan, *backend, step, s, state->steps[s]);
      if (!status) return status;  // `state` tears down whatever was made
      if (const KernelPtr& k = state->steps[s].kernel) {
        kernelWorkspace[s] = k->workspaceSize();
        state->usesLibraries = state->usesLibraries || k->usesLibraries();
      }
    }
  }
  state->arenaBytes = plan.arenaBytes;
  if (plan.profiles.empty()) {
    const WorkspacePlacement placed = placeWorkspacesInArena(plan, kernelWorkspace);
    state->workspaceOffsets = placed.offsets;
    state->arenaBytes = placed.arenaBytes;
  }
  if (!backend->usesHostMemory()) {
    // Weights go to the device once per engine; every context reads the same copy.
    state->deviceWeights.resize(plan.weights.size());
    for (size_t w = 0; w < plan.weights.size(); ++w) {
      const auto& bytes = *plan.weights[w];
      KILN_RETURN_IF_ERROR(
          backend->allocate(bytes.size(), "engine weights", state->deviceWeights[w]));
      KILN_RETURN_IF_ERROR(
          backend->copyFromHost(state->deviceWeights[w]->data(), bytes.data(), bytes.size()));
    }
  }
  for (int32_t t : plan.inputs) state->ioTensors[plan.tensors[t].name] = t;
  for (int32_t t : plan.outputs) {
    if (!state->ioTensors.emplace(plan.tensors[t].name, t).second) {
      return corruptData("two inputs or outputs are both called '" + plan.tensors[t].name + "'");
    }
  }
  if (state->ioTensors.size() != plan.inputs.size() + plan.outputs.size()) {
    return corruptData("two network inputs share a name; the plan is corrupted, rebuild it");
  }
  state->plan = std::move(plan);
  if (!state->plan.profiles.empty()) {
    KILN_RETURN_IF_ERROR(prepareProfiles(*state));
  } else {
    // A static plan's one "profile": every plugin tensor at its plan dims.
    state->pluginRanges.assign(1, std::vector<PluginRange>(state->plan.steps.size()));
    for (size_t s = 0; s < state->plan.steps.size(); ++s) {
      const plan::Step& step = state->plan.steps[s];
      if (step.type != LayerType::kPLUGIN) continue;
      PluginRange& r = state->pluginRanges[0][s];
      for (int32_t i : step.inputs) r.min.push_back(state->plan.tensors[i].dims);
      for (int32_t o : step.outputs) r.min.push_back(state->plan.tensors[o].dims);
      r.max = r.min;
    }
  }
  out = std::move(state);
  return Status::ok();
}

}  // namespace kiln
