// What an engine holds, shared by the engine and its contexts (a context keeps it alive, so
// destroying an engine before its contexts is safe).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "core/plan.h"
#include "plugin/plugin_object.h"

namespace kiln {

struct EngineStep {
  std::vector<PluginTensorDesc> inputs;
  std::vector<PluginTensorDesc> outputs;
  KernelPtr kernel;                      // built-in steps
  std::shared_ptr<PluginObject> plugin;  // plugin steps: the engine object E
};

// A plugin step's tensors (inputs then outputs) at a profile's min and max: what its context
// objects' onShapeChange() is traced with, and what the shapes it hears lie between.
struct PluginRange {
  std::vector<Dims> min;
  std::vector<Dims> max;
};

// A plan's kernels at one set of input shapes of one optimization profile (dynamic shapes): every
// tensor's dims re-derived by the ops' shape rules, every step's kernel made by its profile's
// tactic. Immutable once made, shared by the contexts that run those shapes.
struct Specialization {
  int32_t profile = 0;
  std::vector<Dims> dims;  // per plan tensor
  std::vector<EngineStep> steps;
  uint64_t workspaceBytes = 0;
  bool usesLibraries = false;
};

struct EngineState {
  plan::Plan plan;
  const Backend* backend = nullptr;  // the plan's target
  int32_t deviceIndex = -1;          // CUDA: the GPU the engine was loaded on
  // Per plan weight, its copy on the device (uploaded once at load), where the backend does not
  // read host memory; empty otherwise (kernels read plan.weights).
  std::vector<std::unique_ptr<IDeviceBuffer>> deviceWeights;
  bool usesLibraries = false;  // some kernel calls cuBLAS/cuDNN
  // A static plan's steps. A profile plan's kernels live in its Specializations; its plugin steps'
  // engine objects are here too (one per step, whatever the shapes).
  std::vector<EngineStep> steps;
  // Per profile (one for a static plan), per step: the plugin's range (empty for built-ins).
  std::vector<std::vector<PluginRange>> pluginRanges;
  // getOutputDimensions() on an engine object may come from several contexts' setInputShape().
  mutable std::mutex pluginShapeMutex;
  std::unordered_map<std::string, int32_t> ioTensors;  // name -> plan tensor index
  // The arena a context allocates: a static plan's, grown where its built-in steps' workspaces
  // (placed in it by liveness, workspace_placement.h) fit no hole; a profile plan's own.
  uint64_t arenaBytes = 0;
  // A static plan's built-in steps: per step, its workspace's offset in the arena.
  std::vector<uint64_t> workspaceOffsets;
  // The separate workspace: a static plan's plugins (their scratch stays apart from the
  // activations, so a plugin that overruns it cannot corrupt a tensor), every step of a profile
  // plan (whose shapes, and so workspaces, vary).
  uint64_t workspaceBytes = 0;

  // Dynamic shapes (plan.profiles non-empty). Per tensor, its dims with -1 where some profile
  // lets them vary; per profile and tensor, its bytes at the profile's max (an activation may never
  // need more: its arena range was planned for that).
  std::vector<Dims> dynamicDims;
  std::vector<std::vector<int64_t>> maxBytes;
  uint64_t maxArenaBytes = 0;  // the largest profile's arena
  // Kernels at input shapes `inputDims` (per plan input) of `profile`, made or found in a small
  // cache; the error names the layer that refuses the shapes.
  Status specialize(int32_t profile, const std::vector<Dims>& inputDims,
                    std::shared_ptr<const Specialization>& out) const;
  mutable std::mutex cacheMutex;
  mutable std::map<std::string, std::shared_ptr<const Specialization>> cache;
  mutable std::vector<std::string> cacheOrder;  // oldest first

  // Where a constant's bytes live for the kernels.
  const void* weight(int32_t index) const {
    return deviceWeights.empty() ? plan.weights[index]->data() : deviceWeights[index]->data();
  }

  // Engine objects are terminated and destroyed in the teardown phase.
  ~EngineState();
};

// A built-in step's kernel at the given tensor dims (per plan tensor) by the named tactic.
Status makeStepKernel(const plan::Plan& plan, const Backend& backend, const plan::Step& step,
                      size_t index, const std::vector<Dims>& dims, const std::string& tactic,
                      EngineStep& out);

// A profile plan's checks and tables (specialization.cpp): each profile specialized at min, opt
// and max, its memory plan validated at max, dynamicDims, maxBytes and the workspace filled in.
Status prepareProfiles(EngineState& state);

// Validates a plan beyond its own structure (step wiring, shapes, tactics, plugins) and makes the
// engine's kernels and plugin engine objects.
Status buildEngineState(plan::Plan plan, std::shared_ptr<EngineState>& state);

// JSON for `kiln inspect`: layers, tactics, formats, timings, memory plan, plugin records. Works
// from the plan alone, so a plan whose plugins are not loaded can still be inspected.
std::string inspectPlan(const plan::Plan& plan);

}  // namespace kiln
