// The builder turns a network into plan bytes: it negotiates types and formats, times every valid
// implementation of every layer on real buffers, plans activation memory and writes the plan.
// Engines are made only by the Runtime from a plan, so save/load is the one path.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/network.h"
#include "kiln/status.h"

namespace kiln {

// Where a build is, for a progress bar: BuilderConfig::progress receives one after each unit of
// work. Phases, in order: "layers" (types and formats decided per layer, plugins timed over the
// combinations they accept), "tactics" (every tactic of every built-in layer timed), "plan" (memory
// planned, plugins serialized, the plan written; a single unit). `done` counts from 1 to `total`.
struct BuildProgress {
  const char* phase = "";
  int32_t done = 0;
  int32_t total = 0;
  const char* layer = "";       // the layer just finished, or "" (the "plan" phase)
  int32_t candidatesTimed = 0;  // tactics timed so far in this build (cache hits are not timed)
  double elapsedSeconds = 0;    // since the build started
};

// One range of input shapes a plan serves, as TensorRT's: for each network input with dynamic (-1)
// dims, its smallest, typical and largest shape. Fixed dims must equal the network's in all
// three; every dynamic dim needs min <= opt <= max. The builder keeps, per profile, tactics valid
// over the whole box, timed at opt, and plans memory at max. Checked in full at build, where an
// error names the profile, input, axis and values.
class OptimizationProfile {
 public:
  // False (nothing set) for a null or empty name or a rank outside [0, 8].
  bool setDimensions(const char* inputName, OptProfileSelector which, const Dims& dims) {
    if (!inputName || !*inputName || dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims) return false;
    const int32_t k = static_cast<int32_t>(which);
    if (k < 0 || k > 2) return false;
    Entry& e = inputs_[inputName];
    e.dims[static_cast<size_t>(k)] = dims;
    e.set[static_cast<size_t>(k)] = true;
    return true;
  }
  // nbDims == -1 when not set.
  Dims getDimensions(const char* inputName, OptProfileSelector which) const {
    Dims none;
    none.nbDims = -1;
    const int32_t k = static_cast<int32_t>(which);
    auto it = inputName ? inputs_.find(inputName) : inputs_.end();
    if (it == inputs_.end() || k < 0 || k > 2 || !it->second.set[static_cast<size_t>(k)])
      return none;
    return it->second.dims[static_cast<size_t>(k)];
  }
  // Every input some setDimensions() named, in name order.
  std::vector<std::string> inputNames() const {
    std::vector<std::string> names;
    for (const auto& [name, e] : inputs_) names.push_back(name);
    return names;
  }

 private:
  struct Entry {
    std::array<Dims, 3> dims{};
    std::array<bool, 3> set{};
  };
  std::map<std::string, Entry> inputs_;
};

struct BuilderConfig {
  // Where the plan will run: "cpu", or "cuda" / "cuda:N" (GPU N; the plan records its
  // architecture, e.g. "cuda:sm_90", and runs on any GPU of that architecture).
  std::string target = "cpu";
  // CUDA only: built-in float layers compute in FP16 wherever the CUDA backend has an FP16
  // kernel for them (TensorRT's kFP16 flag). Off: they compute in FP32, like the CPU.
  bool builtinHalf = false;
  // Allow reduced-precision (FP16/BF16) formats wherever a layer or plugin offers them.
  bool allowHalf = true;
  // Timing: each candidate runs `warmupRuns` times, then the median of `timingRuns` is kept.
  // Only candidates that can win are timed in full (the verbose log names the others): a layer
  // with one candidate is timed once; one whose first run is over 4x the best so far stops there;
  // the plain reference is timed only when no other tactic accepts the layer.
  int32_t warmupRuns = 1;
  int32_t timingRuns = 5;
  // Upper bound on any one layer's scratch memory; a candidate needing more is rejected.
  size_t maxWorkspaceBytes = size_t(1) << 30;
  // The format decision timed across the graph (CUDA; static shapes): each channels-last region
  // the greedy rule makes is timed as a whole plan against the region linear and against its tail
  // layers moved behind the reformat, reformats included, and the fastest plan is kept (the verbose
  // log gives each alternative's time). Off: the greedy rule alone, a quicker build whose formats
  // do not depend on timing. Profile builds (dynamic shapes) use the greedy rule.
  bool timeFormatAlternatives = true;
  // Timing cache file (empty: none). Entries are keyed by device, kiln version and op signature.
  std::string timingCachePath;
  // Log at Severity::kInfo what each graph pass changed (and left alone, and why), then per layer
  // every candidate rejected (and why) and the one chosen.
  bool verbose = false;
  // When non-empty, plugin steps use exactly this type/format per position (inputs then
  // outputs), failing the build if the plugin refuses it (the plugin conformance harness forces
  // each combination a plugin accepts this way). Every plugin layer must have that many tensors.
  std::vector<std::pair<DataType, TensorFormat>> pluginCombination;
  // Called on the building thread after each unit of work (BuildProgress above); returning false
  // cancels the build, which then fails with StatusCode::kCancelled. Empty: not called. It must
  // not use the builder it reports on.
  std::function<bool(const BuildProgress&)> progress;
  // Required, at least one, when the network has dynamic inputs; must be empty otherwise. The plan
  // keeps them in this order (IExecutionContext::setOptimizationProfile selects one).
  std::vector<OptimizationProfile> profiles;
};

class IBuilder {
 public:
  virtual ~IBuilder() = default;
  // Plan bytes for the network, or an error naming the layer that failed.
  virtual Status buildSerializedNetwork(const INetworkDefinition& network,
                                        const BuilderConfig& config,
                                        std::vector<uint8_t>& plan) = 0;
};

std::unique_ptr<IBuilder> createBuilder();

}  // namespace kiln
