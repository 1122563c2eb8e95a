// The builder turns a network into plan bytes: it negotiates types and formats, times every valid
// implementation of every layer on real buffers, plans activation memory and writes the plan.
// Engines are made only by the Runtime from a plan, so save/load is the one path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/network.h"
#include "kiln/status.h"

namespace kiln {

struct BuilderConfig {
  // Where the plan will run: "cpu" or "cuda:N".
  std::string target = "cpu";
  // Allow reduced-precision (FP16/BF16) formats wherever a layer or plugin offers them.
  bool allowHalf = true;
  // Timing: each candidate runs `warmupRuns` times, then the median of `timingRuns` is kept.
  int32_t warmupRuns = 1;
  int32_t timingRuns = 5;
  // Upper bound on any one layer's scratch memory; a candidate needing more is rejected.
  size_t maxWorkspaceBytes = size_t(1) << 30;
  // Timing cache file (empty: none). Entries are keyed by device, kiln version and op signature.
  std::string timingCachePath;
  // Per layer, log every candidate rejected (and why) and the one chosen, at Severity::kInfo.
  bool verbose = false;
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
