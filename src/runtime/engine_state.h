// What an engine holds, shared by the engine and its contexts (a context keeps it alive, so
// destroying an engine before its contexts is safe).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cpu/kernel.h"
#if KILN_HAVE_CUDA
#include "backends/cuda/device.h"
#include "backends/cuda/kernel.h"
#endif
#include "core/plan.h"
#include "plugin/plugin_object.h"

namespace kiln {

struct EngineStep {
  std::vector<PluginTensorDesc> inputs;
  std::vector<PluginTensorDesc> outputs;
  std::unique_ptr<cpu::Kernel> kernel;  // built-in steps on the CPU
#if KILN_HAVE_CUDA
  std::unique_ptr<cuda::Kernel> cudaKernel;  // built-in steps on CUDA
#endif
  std::shared_ptr<PluginObject> plugin;  // plugin steps: the engine object E
};

struct EngineState {
  plan::Plan plan;
  DeviceKind device = DeviceKind::kCPU;
  int32_t deviceIndex = -1;  // CUDA: the GPU the engine was loaded on
#if KILN_HAVE_CUDA
  std::vector<cuda::DeviceBuffer> deviceWeights;  // per plan weight, uploaded once at load
  bool usesLibraries = false;                     // some kernel calls cuBLAS/cuDNN
#endif
  std::vector<EngineStep> steps;
  std::unordered_map<std::string, int32_t> ioTensors;  // name -> plan tensor index
  uint64_t workspaceBytes = 0;

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
