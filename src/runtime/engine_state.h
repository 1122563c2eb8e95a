// What an engine holds, shared by the engine and its contexts (a context keeps it alive, so
// destroying an engine before its contexts is safe).
#pragma once

#include <memory>
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

struct EngineState {
  plan::Plan plan;
  const Backend* backend = nullptr;  // the plan's target
  int32_t deviceIndex = -1;          // CUDA: the GPU the engine was loaded on
  // Per plan weight, its copy on the device (uploaded once at load), where the backend does not
  // read host memory; empty otherwise (kernels read plan.weights).
  std::vector<std::unique_ptr<IDeviceBuffer>> deviceWeights;
  bool usesLibraries = false;  // some kernel calls cuBLAS/cuDNN
  std::vector<EngineStep> steps;
  std::unordered_map<std::string, int32_t> ioTensors;  // name -> plan tensor index
  uint64_t workspaceBytes = 0;

  // Where a constant's bytes live for the kernels.
  const void* weight(int32_t index) const {
    return deviceWeights.empty() ? plan.weights[index]->data() : deviceWeights[index]->data();
  }

  // Engine objects are terminated and destroyed in the teardown phase.
  ~EngineState();
};

// Validates a plan beyond its own structure (step wiring, shapes, tactics, plugins) and makes the
// engine's kernels and plugin engine objects.
Status buildEngineState(plan::Plan plan, std::shared_ptr<EngineState>& state);

// JSON for `kiln inspect`: layers, tactics, formats, timings, memory plan, plugin records. Works
// from the plan alone, so a plan whose plugins are not loaded can still be inspected.
std::string inspectPlan(const plan::Plan& plan);

}  // namespace kiln
