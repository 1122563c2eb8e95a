// One build, from a network graph to a plan:
//   lower()         decide every tensor's type and format, inserting reformats where neighbours
//                   disagree; plugins choose among the combinations they support by timing
//                   (lowering.cpp, plugin_selection.cpp)
//   chooseTactics() time every tactic of the target backend that accepts each built-in step
//                   (tactic_selection.cpp, tactic_choice.h)
//   makePlan()      plan activation memory, serialize the chosen plugins, fill the plan
//   (builder.cpp)
//   fitWorkspaces() trade a little time for a workspace that fits the arena (workspace_choice.cpp)
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "backends/backend.h"
#include "builder/format_choice.h"
#include "builder/graph.h"
#include "builder/timing_cache.h"
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
  // Plugin steps: what getWorkspaceSize() asked for with each profile's box (one entry for a
  // static build); workspaceBytes is this session's profile's.
  std::vector<uint64_t> profileWorkspaceBytes;
  std::vector<plan::Candidate> candidates;
};

// Tactic choices by layer and kernel configuration (BuildSession::memoKeyOf), shared by the
// lowerings of one build that time format alternatives (format_regions.h): a step an alternative
// leaves as it was is not timed again, and keeps its candidates for `kiln inspect`.
struct StepChoice {
  std::string tactic;
  double medianMs = 0;
  uint64_t workspaceBytes = 0;
  std::vector<plan::Candidate> candidates;
};
using StepMemo = std::map<std::string, StepChoice>;

// Dynamic shapes: per plugin layer, per profile, per tensor (inputs then outputs), its dims at the
// profile's min, opt and max.
using PluginBoxes = std::map<std::string, std::vector<std::vector<std::array<Dims, 3>>>>;

// Where the plan will run, resolved from BuilderConfig::target.
struct BuildTarget {
  const Backend* backend = &cpuBackend();
  int32_t deviceIndex = -1;        // CUDA ordinal
  std::string planTarget = "cpu";  // what the plan records: "cpu", "cuda:sm_90"
  DeviceKind device() const { return backend->getKind(); }
};

// Resolves "cpu", "cuda" or "cuda:N" (and checks the device is there).
Status resolveBuildTarget(const std::string& target, BuildTarget& out);

// Empty when `tactic` makes a kernel for every corner within the workspace limit (the largest
// workspace in `workspace`), else why not, naming the corner and its first input's shape.
std::string declineAtCorners(const Tactic& tactic,
                             const std::vector<std::pair<std::string, KernelConfig>>& corners,
                             size_t limit, uint64_t& workspace);

class BuildSession {
 public:
  BuildSession(const Graph& graph, const BuilderConfig& config, BuildTarget target = {});
  ~BuildSession();

  Status lower();
  // Uses and updates BuilderConfig::timingCachePath when set. With a finite `abandonAboveMs`, stops
  // as soon as the steps timed so far sum to more (abandoned() then says so): a format alternative
  // that cannot beat the best plan is not timed to its end.
  Status chooseTactics(double abandonAboveMs = std::numeric_limits<double>::infinity());
  Status makePlan(plan::Plan& plan);
  // A static plan's steps whose workspace would grow the arena take a timed candidate within a
  // tolerance of their time that fits it (workspace_choice.cpp).
  Status fitWorkspaces(plan::Plan& plan);
  // A profile's opt session (setCorners): a profile plan's context holds one workspace of the
  // largest step's size beside an arena of `arenaBytes`; the step whose workspace exceeds every
  // other's takes a timed candidate, accepting the corners, whose workspace does not, by the same
  // rule of time against memory (workspace_choice.cpp).
  Status fitProfileWorkspace(uint64_t arenaBytes);
  // Tells BuilderConfig::progress (when set) that unit `done` of `total` of `phase` is finished;
  // kCancelled when it asks to stop.
  Status reportProgress(const char* phase, int32_t done, int32_t total,
                        const std::string& layer) const;

  // Dynamic shapes (profile_build.cpp): sessions of the same graph lowered at the profile's other
  // corners ("min", "max"), step for step the same; every tactic chosen must accept them too.
  void setCorners(std::vector<std::pair<std::string, const BuildSession*>> corners) {
    corners_ = std::move(corners);
  }
  // Every build object of a plugin layer in `boxes` is configured once per profile with its box
  // (DESIGN.md §7); without an entry (a static build) its one box is this session's shapes.
  void setPluginBoxes(PluginBoxes boxes) { pluginBoxes_ = std::move(boxes); }
  // The other lowerings of a profile build take the plugin choices of `from` (profile 0's opt)
  // untimed, with profile `profile`'s workspace: one plan has one configured object per layer.
  void setPluginChoices(const BuildSession* from, size_t profile) {
    pluginChoices_ = from;
    pluginProfile_ = profile;
  }
  // Format alternatives (format_regions.h): the graph nodes lowered all linear whatever the greedy
  // rule would choose (indexed by graph node; set before lower()).
  void setForceLinear(std::vector<bool> forceLinear) { forceLinear_ = std::move(forceLinear); }
  // After lower(): which graph nodes the lowering gave some channels-last tensor.
  const std::vector<bool>& channelsLastNodes() const { return channelsLastNodes_; }
  // Steps whose configuration is in the memo take its choice untimed; chosen ones are added.
  void setStepMemo(StepMemo* memo) { stepMemo_ = memo; }
  // Adds every chosen step of this session to `memo`.
  void recordChoices(StepMemo& memo) const;
  // Step `index`'s key in a StepMemo: its name and its configuration's timing-cache key, and in a
  // profile build its configurations' at the corners (setCorners).
  std::string memoKeyOf(size_t index, const KernelConfig& config) const;
  bool abandoned() const { return abandoned_; }
  // The sum of the steps' timed medians: the plan's cost as the builder compares plans.
  double timedMs() const;
  const std::vector<BuildTensor>& buildTensors() const { return tensors_; }
  const std::vector<BuildStep>& buildSteps() const { return steps_; }
  std::vector<BuildStep>& buildSteps() { return steps_; }
  // What a kernel for the step is made from, at this session's shapes.
  KernelConfig kernelConfig(const BuildStep& step) const;

 private:
  // lowering.cpp
  Status lowerBuiltin(const GraphNode& node);
  // BuilderConfig::builtinHalf: FP32 compute types become FP16 where the target has a kernel.
  void preferHalf(const GraphNode& node, std::vector<DataType>& types);
  Status lowerPlugin(const GraphNode& node);
  // The tensor holding graph tensor `g` in the given type and format, adding a reformat step
  // (or converting a constant once, at build time) when its home has another one.
  Status want(int32_t g, DataType type, TensorFormat format, int32_t& out);
  // The formats of a built-in layer's inputs and outputs (format_choice.h): the first candidate
  // some kernel of the target accepts, else all linear.
  FormatCandidate chooseFormats(const GraphNode& node, const std::vector<DataType>& types,
                                const std::vector<TensorShape>& inputs,
                                const std::vector<TensorShape>& outputs);
  int32_t addTensor(BuildTensor tensor);
  // The tensor a step writes for graph tensor `g` (a node's output): named after it and made its
  // home.
  int32_t addNodeOutput(int32_t g, BuildTensor tensor);
  std::string uniqueName(const std::string& base);

  // plugin_selection.cpp
  struct Combination {
    std::vector<PluginTensorDesc> descs;  // inputs then outputs
  };
  Status enumerateCombinations(const GraphNode& node, const std::vector<TensorShape>& outputs,
                               std::vector<Combination>& combinations);
  // The descriptions a build object of `node` is configured with, per profile (inputs then
  // outputs): `combination`'s types and formats, -1 on the axes a profile lets vary.
  std::vector<std::vector<DynamicPluginTensorDesc>> pluginProfileDescs(
      const GraphNode& node, const Combination& combination) const;
  // Configures a fresh build object with every profile's box, then times it at these shapes.
  Status timePluginCandidate(const GraphNode& node, const Combination& combination,
                             std::shared_ptr<PluginObject>& object, double& ms,
                             std::vector<uint64_t>& workspace);
  // lowerPlugin() where setPluginChoices() named the session that chose.
  Status lowerChosenPlugin(const GraphNode& node);
  // Times enqueue() of an initialized build object on buffers of the target.
  Status timePluginEnqueue(const GraphNode& node, PluginObject& object,
                           const std::vector<PluginTensorDesc>& inputs,
                           const std::vector<PluginTensorDesc>& outputs, uint64_t workspace,
                           double& ms);
  // workspace_choice.cpp: the trade's pick for step `index`, whose tactic is `chosen`: the fastest
  // of its timed candidates and of the one a build before remembered (withRememberedFit) that may
  // replace it (an in-place residual kept), within allowanceMs, whose workspace at this session's
  // shapes and its corners' `fits`; in `picked` and `bytes`, and remembered in the timing cache.
  bool tradeForWorkspace(size_t index, const Tactic& chosen, double allowanceMs,
                         const std::function<bool(uint64_t)>& fits, plan::Candidate& picked,
                         uint64_t& bytes);
  Status reformatCost(const Dims& dims, DataType fromType, TensorFormat fromFormat, DataType toType,
                      TensorFormat toFormat, double& ms);

  // tactic_selection.cpp
  // A candidate whose first timed run exceeds this many times the best so far is not timed
  // further: timings of one kernel vary by tens of percent, not by 4x.
  static constexpr double kDropFactor = 4.0;
  Status chooseTactic(BuildStep& step, size_t index);
  // The timing cache's choice for the configuration when it has one that still accepts it (and
  // the corners); false otherwise.
  bool chooseFromCache(BuildStep& step, const KernelConfig& config,
                       const std::vector<std::pair<std::string, KernelConfig>>& corners);
  // Times the step's tactics on buffers of the target made for it (chooseFastest).
  Status timeOnBuffers(BuildStep& step, const KernelConfig& config,
                       const std::vector<std::pair<std::string, KernelConfig>>& corners);
  // The choice among the target's tactics for the configuration, timed on these buffers; a
  // tactic must also accept every configuration of `corners` (dynamic shapes).
  Status chooseFastest(BuildStep& step, const KernelConfig& config,
                       const std::vector<std::pair<std::string, KernelConfig>>& corners,
                       const std::vector<const void*>& inputs, const std::vector<void*>& outputs);
  // The target's timer (its stream and library handles), made on first use.
  Status timer(Timer*& out);
  // Whether some tactic of the target accepts the configuration (lowering asks before FP16).
  bool accepts(const KernelConfig& config) const;
  // A buffer on the target holding `constant` (host bytes of the tensor) or, without one,
  // random floats (integers: zeros, valid for any index range).
  Status timingBuffer(const PluginTensorDesc& desc, const void* constant,
                      std::unique_ptr<IDeviceBuffer>& out);

  void logVerbose(const std::string& message) const;

  const Graph& graph_;
  BuilderConfig config_;
  BuildTarget target_;
  std::unique_ptr<Timer> timer_;
  std::mt19937 rng_;
  std::vector<BuildTensor> tensors_;
  std::vector<BuildStep> steps_;
  std::vector<int32_t> outputTensors_;  // per network output, the BuildTensor the caller sees
  std::vector<int32_t> home_;           // graph tensor -> BuildTensor index (-1: not lowered)
  std::map<std::tuple<int32_t, DataType, TensorFormat>, int32_t> variants_;
  std::map<std::string, int> names_;
  std::map<std::string, double> reformatTimes_;
  TimingCache timingCache_;
  int32_t candidatesTimed_ = 0;  // for BuildProgress
  std::vector<std::pair<std::string, const BuildSession*>> corners_;
  std::vector<bool> forceLinear_;
  std::vector<bool> channelsLastNodes_;
  StepMemo* stepMemo_ = nullptr;
  bool abandoned_ = false;
  PluginBoxes pluginBoxes_;
  const BuildSession* pluginChoices_ = nullptr;
  size_t pluginProfile_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace kiln
