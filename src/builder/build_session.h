// One build, from a network graph to a plan:
//   lower()         decide every tensor's type and format, inserting reformats where neighbours
//                   disagree; plugins choose among the combinations they support by timing
//                   (lowering.cpp, plugin_selection.cpp)
//   chooseTactics() time every CPU tactic that accepts each built-in step (tactic_selection.cpp)
//   makePlan()      plan activation memory, serialize the chosen plugins, fill the plan
//   (builder.cpp)
#pragma once

#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "backends/kernel_config.h"
#include "builder/timing_cache.h"
#include "core/graph.h"
#include "core/plan.h"
#include "kiln/builder.h"
#include "plugin/plugin_object.h"

namespace kiln {

struct BuildTensor {
  std::string name;
  Dims dims;
  DataType type = DataType::kFLOAT;
  TensorFormat format = TensorFormat::kLINEAR;
  plan::TensorKind kind = plan::TensorKind::kACTIVATION;
  std::shared_ptr<const std::vector<uint8_t>> constant;  // kCONSTANT only
};

struct BuildStep {
  LayerType type = LayerType::kCONSTANT;
  std::string name;
  LayerParams params;
  std::vector<int32_t> inputs;  // BuildTensor indices
  std::vector<int32_t> outputs;
  std::shared_ptr<PluginObject> definition;  // plugin steps
  std::shared_ptr<PluginObject> chosen;      // plugin steps: the configured build object kept
  std::string tactic;
  double medianMs = 0;
  uint64_t workspaceBytes = 0;
  std::vector<plan::Candidate> candidates;
};

// Where the plan will run, resolved from BuilderConfig::target.
struct BuildTarget {
  DeviceKind device = DeviceKind::kCPU;
  int32_t deviceIndex = -1;        // CUDA ordinal
  std::string planTarget = "cpu";  // what the plan records: "cpu", "cuda:sm_90"
};

// Resolves "cpu", "cuda" or "cuda:N" (and checks the GPU is there).
Status resolveBuildTarget(const std::string& target, BuildTarget& out);

// The CUDA side of timing (a stream and library handles), defined where CUDA is.
struct CudaTimingState;

class BuildSession {
 public:
  BuildSession(const Graph& graph, const BuilderConfig& config, BuildTarget target = {});
  ~BuildSession();

  Status lower();
  // Uses and updates BuilderConfig::timingCachePath when set.
  Status chooseTactics();
  Status makePlan(plan::Plan& plan);

 private:
  // lowering.cpp
  Status lowerBuiltin(const GraphNode& node);
  // CUDA with BuilderConfig::builtinHalf: FP32 compute types become FP16 where a kernel exists.
  void preferHalf(const GraphNode& node, std::vector<DataType>& types);
  Status lowerPlugin(const GraphNode& node);
  // The tensor holding graph tensor `g` in the given type and format, adding a reformat step
  // (or converting a constant once, at build time) when its home has another one.
  Status want(int32_t g, DataType type, TensorFormat format, int32_t& out);
  int32_t addTensor(BuildTensor tensor);
  std::string uniqueName(const std::string& base);

  // plugin_selection.cpp
  struct Combination {
    std::vector<PluginTensorDesc> descs;  // inputs then outputs
  };
  Status enumerateCombinations(const GraphNode& node, const std::vector<TensorShape>& outputs,
                               std::vector<Combination>& combinations);
  Status timePluginCandidate(const GraphNode& node, const Combination& combination,
                             std::shared_ptr<PluginObject>& object, double& ms,
                             uint64_t& workspace);
  Status reformatCost(const Dims& dims, DataType fromType, TensorFormat fromFormat, DataType toType,
                      TensorFormat toFormat, double& ms);

  // tactic_selection.cpp
  Status chooseTactic(BuildStep& step);
  // tactic_choice.h: the choice itself, for either backend's tactic list.
  template <typename Tactic, typename Time>
  Status chooseFastest(BuildStep& step, const KernelConfig& config, std::span<const Tactic> tactics,
                       const char* backend, Time&& time);

  // cuda_tactic_selection.cpp: the same choices on the GPU, timed with CUDA events
  Status chooseCudaTactic(BuildStep& step);
  Status reformatCostCuda(const KernelConfig& config, double& ms);
  // Times enqueue() of an initialized build object on device buffers.
  Status timePluginEnqueueCuda(const GraphNode& node, PluginObject& object,
                               const std::vector<PluginTensorDesc>& inputs,
                               const std::vector<PluginTensorDesc>& outputs, uint64_t workspace,
                               double& ms);
  Status cudaTiming(CudaTimingState*& state);
  // Whether some CUDA tactic accepts the configuration (lowering asks before choosing FP16).
  bool cudaAccepts(const KernelConfig& config) const;

  void logVerbose(const std::string& message) const;

  const Graph& graph_;
  BuilderConfig config_;
  BuildTarget target_;
  std::shared_ptr<CudaTimingState> cudaTiming_;
  std::mt19937 rng_;
  std::vector<BuildTensor> tensors_;
  std::vector<BuildStep> steps_;
  std::vector<int32_t> outputTensors_;  // per network output, the BuildTensor the caller sees
  std::vector<int32_t> home_;           // graph tensor -> BuildTensor index (-1: not lowered)
  std::map<std::tuple<int32_t, DataType, TensorFormat>, int32_t> variants_;
  std::map<std::string, int> names_;
  std::map<std::string, double> reformatTimes_;
  TimingCache timingCache_;
};

inline bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

}  // namespace kiln
