// Building one plan for a range of shapes (optimization profiles, DESIGN.md §7).
//
// The graph is specialized, passed and lowered at every corner of every profile (min, opt, max).
// Those lowerings must agree step for step, parameters included, with only dims differing: that
// is what makes the one list of steps valid for every shape in a box, since each shape is then
// re-derived by the ops' own shape rules at run time. Tactics are chosen per profile at opt among
// those that also accept min and max; the greedy formats' alternatives (format_regions.h) are
// lowered at every corner and cost the profiles' plans summed at opt; memory is planned per
// profile at max.
#pragma once

#include <array>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "builder/build_session.h"
#include "builder/graph.h"
#include "builder/passes/pass.h"
#include "kiln/builder.h"

namespace kiln {

// A profile checked against the graph: for every input, dims at min, opt and max (fixed inputs
// get their own dims in all three). Named dims are narrowed to the intersection of their ranges.
struct ResolvedProfile {
  std::map<std::string, std::array<Dims, 3>> inputs;
};

// TensorRT's rules, with errors that name profile, input, axis and values: every dynamic input
// covered with min <= opt <= max, fixed dims kept, no unknown names, named dims overlapping
// (with equal opt).
Status resolveProfiles(const Graph& graph, const std::vector<OptimizationProfile>& profiles,
                       std::vector<ResolvedProfile>& out);

Status buildProfilePlan(const Graph& network, const BuilderConfig& config,
                        std::span<const passes::Pass> passes, const BuildTarget& target,
                        std::vector<uint8_t>& bytes);

}  // namespace kiln
