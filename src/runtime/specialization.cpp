// Dynamic shapes at run time (DESIGN.md §7): a plan built with optimization profiles holds one list
// of steps for every shape in each profile's box. Input shapes are turned into every tensor's dims
// by the ops' shape rules (the same rules the plan reader checks static plans with), and kernels
// are made for them by the profile's tactics, outside enqueue. Memory was planned at each profile's
// max; a tensor that would need more than its max size there is refused, never overrun.
#include <algorithm>

#include "ops/op_table.h"
#include "plugin/plugin_object.h"
#include "runtime/engine_state.h"
#include "runtime/plan_validate.h"

namespace kiln {
namespace {

constexpr size_t kCacheEntries = 16;

std::string shapeKey(int32_t profile, const std::vector<Dims>& inputs) {
  std::string key = std::to_string(profile);
  for (const Dims& d : inputs) {
    key += '|';
    for (int32_t k = 0; k < d.nbDims; ++k) key += std::to_string(d.d[k]) + ",";
  }
  return key;
}

// A plugin step's output dims from its engine object's getOutputDimensions() at these input dims.
Status inferPluginOutputs(const EngineState& state, size_t s, const std::vector<Dims>& inputs,
                          std::vector<Dims>& outputs) {
  const plan::Step& step = state.plan.steps[s];
  const std::shared_ptr<PluginObject>& plugin = state.steps[s].plugin;
  if (!plugin) return internalError("layer '" + step.layerName + "': no plugin engine object");
  std::lock_guard<std::mutex> lock(state.pluginShapeMutex);
  outputs.resize(step.outputs.size());
  for (size_t o = 0; o < step.outputs.size(); ++o)
    KILN_RETURN_IF_ERROR(plugin->getOutputDimensions(static_cast<int32_t>(o), inputs, outputs[o]));
  return Status::ok();
}

// Every tensor's dims from the inputs' by the steps' shape rules (plugins: their own).
Status inferDims(const EngineState& state, const std::vector<Dims>& inputDims,
                 std::vector<Dims>& dims) {
  const plan::Plan& plan = state.plan;
  dims.clear();
  for (const plan::Tensor& t : plan.tensors) dims.push_back(t.dims);
  for (size_t k = 0; k < plan.inputs.size(); ++k) dims[plan.inputs[k]] = inputDims[k];
  std::vector<TensorShape> in, out;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step& step = plan.steps[s];
    if (step.type == LayerType::kCONSTANT) continue;
    in.clear();
    out.clear();
    if (step.type == LayerType::kPLUGIN) {
      std::vector<Dims> pluginIn, pluginOut;
      for (int32_t i : step.inputs) pluginIn.push_back(dims[i]);
      Status st = inferPluginOutputs(state, s, pluginIn, pluginOut);
      if (!st)
        return invalidArgument("layer '" + step.layerName +
                               "' (a plugin) does not accept these input shapes: " + st.message());
      for (size_t o = 0; o < pluginOut.size(); ++o) dims[step.outputs[o]] = pluginOut[o];
      continue;
    }
    for (int32_t i : step.inputs) in.push_back({dims[i], plan.tensors[i].type});
    Status st = inferLayerOutputs(step.type, step.params, in, out);
    if (!st)
      return invalidArgument("layer '" + step.layerName + "' (" + layerTypeName(step.type) +
                             ") does not accept these input shapes: " + st.message());
    if (out.size() != step.outputs.size())
      return corruptData("layer '" + step.layerName + "': wrong number of outputs");
    for (size_t o = 0; o < out.size(); ++o) {
      if (out[o].type != plan.tensors[step.outputs[o]].type)
        return corruptData("layer '" + step.layerName + "': output type differs from the plan's");
      dims[step.outputs[o]] = out[o].dims;
    }
  }
  return Status::ok();
}

Status makeSpecialization(const EngineState& state, int32_t profile,
                          const std::vector<Dims>& inputDims, bool checkMemory,
                          std::shared_ptr<Specialization>& out) {
  const plan::Plan& plan = state.plan;
  auto spec = std::make_shared<Specialization>();
  spec->profile = profile;
  KILN_RETURN_IF_ERROR(inferDims(state, inputDims, spec->dims));
  if (checkMemory) {
    for (size_t t = 0; t < plan.tensors.size(); ++t) {
      if (plan.tensors[t].kind != plan::TensorKind::kACTIVATION) continue;
      const int64_t bytes = plan::tensorBytes(spec->dims[t], plan.tensors[t].type);
      if (bytes < 0 || bytes > state.maxBytes[profile][t])
        return invalidArgument("tensor '" + plan.tensors[t].name + "' would be " +
                               dimsStringTimes(spec->dims[t]) + " (" + std::to_string(bytes) +
                               " bytes) at these input shapes, larger than at the profile's max (" +
                               std::to_string(state.maxBytes[profile][t]) +
                               " bytes), which its memory was planned for");
    }
  }
  const plan::Profile& prof = plan.profiles[profile];
  spec->steps.resize(plan.steps.size());
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step& step = plan.steps[s];
    if (step.type == LayerType::kCONSTANT) continue;
    if (step.type == LayerType::kPLUGIN) {
      // The engine object serves every shape; a context object runs it with these descriptions.
      EngineStep& e = spec->steps[s];
      const DeviceKind device = state.backend->getKind();
      for (int32_t i : step.inputs)
        e.inputs.push_back({spec->dims[i], plan.tensors[i].type, plan.tensors[i].format, device});
      for (int32_t o : step.outputs)
        e.outputs.push_back({spec->dims[o], plan.tensors[o].type, plan.tensors[o].format, device});
      e.plugin = state.steps[s].plugin;
      continue;
    }
    KILN_RETURN_IF_ERROR(
        makeStepKernel(plan, *state.backend, step, s, spec->dims, prof.tactics[s], spec->steps[s]));
    const Kernel& k = *spec->steps[s].kernel;
    spec->workspaceBytes = std::max<uint64_t>(spec->workspaceBytes, k.workspaceSize());
    spec->usesLibraries = spec->usesLibraries || k.usesLibraries();
  }
  out = std::move(spec);
  return Status::ok();
}

}  // namespace

Status EngineState::specialize(int32_t profile, const std::vector<Dims>& inputDims,
                               std::shared_ptr<const Specialization>& out) const {
  const std::string key = shapeKey(profile, inputDims);
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it != cache.end()) {
      out = it->second;
      return Status::ok();
    }
  }
  std::shared_ptr<Specialization> made;
  KILN_RETURN_IF_ERROR(makeSpecialization(*this, profile, inputDims, true, made));
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto [it, inserted] = cache.emplace(key, std::move(made));
  if (inserted) {
    cacheOrder.push_back(key);
    // Contexts hold their specialization, so dropping the oldest entry frees nothing in use.
    if (cacheOrder.size() > kCacheEntries) {
      cache.erase(cacheOrder.front());
      cacheOrder.erase(cacheOrder.begin());
    }
  }
  out = it->second;
  return Status::ok();
}

Status prepareProfiles(EngineState& state) {
  // Plugin calls made here (output shapes at each corner, workspace per box) belong to the load.
  PhaseScope phase(TracePhase::kDeserialize);
  const plan::Plan& plan = state.plan;
  state.dynamicDims.clear();
  for (const plan::Tensor& t : plan.tensors) state.dynamicDims.push_back(t.dims);
  state.maxBytes.assign(plan.profiles.size(), {});
  for (size_t p = 0; p < plan.profiles.size(); ++p) {
    const plan::Profile& prof = plan.profiles[p];
    const std::string where = "profile " + std::to_string(p);
    std::vector<Dims> corner[3];
    for (auto& c : corner)
      for (int32_t t : plan.inputs) c.push_back(plan.tensors[t].dims);
    for (const plan::ProfileInput& in : prof.inputs) {
      const size_t k = static_cast<size_t>(
          std::find(plan.inputs.begin(), plan.inputs.end(), in.tensor) - plan.inputs.begin());
      corner[0][k] = in.min;
      corner[1][k] = in.opt;
      corner[2][k] = in.max;
    }
    // At max: the memory plan as a static plan at those dims must pass every check.
    std::shared_ptr<Specialization> atMax;
    Status s = makeSpecialization(state, static_cast<int32_t>(p), corner[2], false, atMax);
    if (!s) return corruptData(where + "'s max shapes: " + s.message() + "; rebuild the plan");
    plan::Plan check = plan;
    check.profiles.clear();
    check.equalities.clear();
    check.arenaBytes = prof.arenaBytes;
    for (size_t t = 0; t < check.tensors.size(); ++t) {
      check.tensors[t].dims = atMax->dims[t];
      check.tensors[t].arenaOffset = prof.arenaOffsets[t];
    }
    for (size_t i = 0; i < check.steps.size(); ++i) {
      check.steps[i].tactic = prof.tactics[i];
      check.steps[i].workspaceBytes = 0;
    }
    s = plan::validatePlan(check);
    if (!s) return corruptData(where + " at its max shapes: " + s.message());
    std::vector<int64_t>& bytes = state.maxBytes[p];
    uint64_t naive = 0;
    for (size_t t = 0; t < plan.tensors.size(); ++t) {
      bytes.push_back(plan::tensorBytes(atMax->dims[t], plan.tensors[t].type));
      if (plan.tensors[t].kind == plan::TensorKind::kACTIVATION)
        naive += (static_cast<uint64_t>(bytes.back()) + 63) / 64 * 64 + 64;
    }
    if (prof.arenaBytes > naive)
      return corruptData(where + "'s activation arena (" + std::to_string(prof.arenaBytes) +
                         " bytes) is larger than all its activations together; rebuild the plan");
    state.maxArenaBytes = std::max(state.maxArenaBytes, prof.arenaBytes);
    // Min and opt must be made too (every tactic accepts its box's corners), and tell which dims
    // vary.
    std::shared_ptr<Specialization> atMin, atOpt;
    s = makeSpecialization(state, static_cast<int32_t>(p), corner[0], true, atMin);
    if (!s) return corruptData(where + "'s min shapes: " + s.message() + "; rebuild the plan");
    s = makeSpecialization(state, static_cast<int32_t>(p), corner[1], true, atOpt);
    if (!s) return corruptData(where + "'s opt shapes: " + s.message() + "; rebuild the plan");
    for (size_t t = 0; t < plan.tensors.size(); ++t) {
      Dims& d = state.dynamicDims[t];
      for (int32_t k = 0; k < d.nbDims; ++k)
        if (atMin->dims[t].d[k] != atMax->dims[t].d[k] || atMin->dims[t].d[k] != d.d[k])
          d.d[k] = -1;
    }
    for (const auto* spec : {atMin.get(), atOpt.get(), atMax.get()}) {
      state.workspaceBytes = std::max(state.workspaceBytes, spec->workspaceBytes);
      state.usesLibraries = state.usesLibraries || spec->usesLibraries;
    }
    // Plugins: their range in this profile, and the workspace they ask for over all of it.
    std::vector<PluginRange>& ranges = state.pluginRanges.emplace_back(plan.steps.size());
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const plan::Step& step = plan.steps[i];
      if (step.type != LayerType::kPLUGIN) continue;
      std::vector<int32_t> all = step.inputs;
      all.insert(all.end(), step.outputs.begin(), step.outputs.end());
      std::vector<DynamicPluginTensorDesc> descs;
      for (int32_t t : all) {
        const DynamicPluginTensorDesc d =
            boxDesc({state.dynamicDims[t], plan.tensors[t].type, plan.tensors[t].format,
                     state.backend->getKind()},
                    atMin->dims[t], atOpt->dims[t], atMax->dims[t]);
        descs.push_back(d);
        ranges[i].min.push_back(d.min);
        ranges[i].max.push_back(d.max);
      }
      const std::vector<DynamicPluginTensorDesc> in(descs.begin(),
                                                    descs.begin() + step.inputs.size());
      const std::vector<DynamicPluginTensorDesc> out(descs.begin() + step.inputs.size(),
                                                     descs.end());
      size_t bytes = 0;
      s = state.steps[i].plugin->getWorkspaceSize(in, out, bytes);
      if (!s) return s.withContext(where);
      state.workspaceBytes = std::max<uint64_t>(state.workspaceBytes, bytes);
    }
    // Opt and max are the shapes most runs use: their kernels, made anyway, start the cache.
    std::lock_guard<std::mutex> lock(state.cacheMutex);
    for (int c : {1, 2}) {
      const std::string key = shapeKey(static_cast<int32_t>(p), corner[c]);
      if (state.cache.emplace(key, c == 1 ? atOpt : atMax).second) state.cacheOrder.push_back(key);
    }
  }
  return Status::ok();
}

}  // namespace kiln
