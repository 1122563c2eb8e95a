// From a network's graph to plan bytes: the graph passes over the builder's own copy, then one
// BuildSession (lower, choose tactics, make the plan). IBuilder::buildSerializedNetwork checks
// the network and calls this with passes::defaultPipeline().
//
// Tests call it with another list of passes (an empty one builds the network exactly as
// written) to compare what the passes change against the network without them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "builder/graph.h"
#include "builder/passes/pass.h"
#include "kiln/builder.h"

namespace kiln {

Status buildPlanFromGraph(const Graph& network, const BuilderConfig& config,
                          std::span<const passes::Pass> passes, std::vector<uint8_t>& bytes);

}  // namespace kiln
