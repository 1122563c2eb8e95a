// The memory side of the tactic choice (workspace_choice.cpp, BuildSession::fitWorkspaces): the
// rule by which a step whose workspace would grow the arena trades a little time for one that fits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "builder/timing_cache.h"
#include "core/plan.h"

namespace kiln {

// How much slower than the chosen tactic, on that layer, a candidate may be and still be taken
// for fitting the arena, whatever the memory at stake: a few percent of one layer.
constexpr double kWorkspaceTimeTolerance = 0.25;

// The exchange rate of the trade measured on the whole plan: the plan may run slower by this
// fraction of the share of a context's memory that the slower candidate saves (1% of the plan's
// time for 4% of its memory). A layer-local tolerance alone made the trade a matter of chance:
// ResNet-50 b64's stem grows every context by 80 MiB (a third of it) in cuDNN's fastest
// algorithm, and its quarter-batch slices timed 0.303 against 0.264 ms in one run (taken) and
// 0.452 against 0.301 ms in another (refused), both a few percent of a 2.1 ms plan.
constexpr double kPlanTimePerMemoryShare = 0.25;

// The time a step may give up to keep `growth` bytes out of every context: the larger of
// kWorkspaceTimeTolerance of the layer's own time and kPlanTimePerMemoryShare of the plan's time
// (`planMs`, its steps summed) per share of the context's memory saved, growth over
// arenaBytes + growth.
double tradeAllowanceMs(double layerMs, double planMs, uint64_t growth, uint64_t arenaBytes);

// The least growth of the arena worth any time: a step whose workspace would grow every context by
// less keeps its fastest tactic. Kilobytes of growth (a workspace a little larger than its hole)
// had MobileNetV2 b64 give 0.015 ms and ResNet-50 b64 FP32 0.23 ms for nothing (H100, 2026-12-06).
constexpr uint64_t kWorkspaceGrowthWorthTime = uint64_t{1} << 20;

// Whether growing every context by `growth` bytes is worth taking a slower tactic to avoid.
constexpr bool growthWorthTime(uint64_t growth) { return growth >= kWorkspaceGrowthWorthTime; }

// A profile plan's context holds one workspace, the size of its largest step's: the step that
// sets it (`step`, or none: every workspace 0) and how far it exceeds every other's (`excess`,
// over `others`, the largest of the rest; ties give 0).
struct WorkspaceExcess {
  size_t step = SIZE_MAX;
  uint64_t excess = 0;
  uint64_t others = 0;
};
WorkspaceExcess largestWorkspaceExcess(const std::vector<uint64_t>& workspaces);

// The trade's choice for a configuration is kept in the timing cache beside its fastest tactic's
// entry (under workspaceFitKey of the configuration's key), not over it: a rebuild from the cache
// then prices the plan as the first build did (its format alternatives stop where they stopped,
// with nothing new to time) and, the remembered choice joining the one cached candidate
// (withRememberedFit), makes the same trade.
std::string workspaceFitKey(const std::string& configKey);
std::vector<plan::Candidate> withRememberedFit(std::vector<plan::Candidate> candidates,
                                               const TimingCache& cache, const std::string& fitKey);

// The fastest timed candidate other than `chosen`, at most allowanceMs slower than chosenMs, for
// which workspaceOf gives a workspace (false: the tactic cannot be made or must not be taken) that
// `fits`, with that workspace in *workspace; nullptr when there is none.
const plan::Candidate* fittingCandidate(
    const std::vector<plan::Candidate>& candidates, const std::string& chosen, double chosenMs,
    double allowanceMs, const std::function<bool(const plan::Candidate&, uint64_t&)>& workspaceOf,
    const std::function<bool(uint64_t)>& fits, uint64_t* workspace = nullptr);

}  // namespace kiln
