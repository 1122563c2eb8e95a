// The builder's graph passes in their fixed order, and running a list of them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "builder/passes/pass.h"

namespace kiln::passes {

// Every build runs these, in this order, on its copy of the network's graph.
std::span<const Pass> defaultPipeline();

// Runs `passes` in order over `graph`. When `log` is given, it receives each pass's report as
// lines "pass NAME: <change>" (or "pass NAME: no change"), then "pass NAME: <declined>" lines.
// `target` is the device the build is for (PassContext::target).
Status runPipeline(Graph& graph, std::span<const Pass> passes, const PassLimits& limits,
                   std::vector<std::string>* log, DeviceKind target = DeviceKind::kCPU);

}  // namespace kiln::passes
