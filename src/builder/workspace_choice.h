// The memory side of the tactic choice (workspace_choice.cpp, BuildSession::fitWorkspaces): the
// rule by which a step whose workspace would grow the arena trades a little time for one that fits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/plan.h"

namespace kiln {

// How much slower than the chosen tactic, on that layer, a candidate may be and still be taken
// for fitting the arena: the ResNet-50 stem's 80 MiB are worth a few percent of that one layer.
constexpr double kWorkspaceTimeTolerance = 0.25;

// The fastest timed candidate other than `chosen`, at most kWorkspaceTimeTolerance slower than
// chosenMs, for which workspaceOf gives a workspace (false: the tactic cannot be made or must
// not be taken) that `fits`, with that workspace in *workspace; nullptr when there is none.
const plan::Candidate* fittingCandidate(
    const std::vector<plan::Candidate>& candidates, const std::string& chosen, double chosenMs,
    const std::function<bool(const plan::Candidate&, uint64_t&)>& workspaceOf,
    const std::function<bool(uint64_t)>& fits, uint64_t* workspace = nullptr);

}  // namespace kiln
