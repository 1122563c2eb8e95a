// The builder turns a network into plan bytes: it negotiates types and formats, times every valid
// implementation of every layer on real buffers, plans activation memory and writes the plan.
// Engines are made only by the Runtime from a plan, so save/load is the one path.
#pragma once

#include <cstdint>
#include <functional>
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
