// The format decision timed across the graph (DESIGN.md §4), as TensorRT makes it: the greedy rule
// of format_choice.h proposes channels-last regions, and the builder times the whole plan with
// alternatives to them, reformats included, keeping the faster.
//
// A region is a maximal set of layers lowered with some channels-last tensor, connected through
// the tensors they pass each other (a CNN's trunk is one region). The alternatives, tried in
// order, each kept only when its plan is faster (searchFormatRegions):
//   1. the whole region linear (no reformats around it, linear kernels inside);
//   2. otherwise its exits linear, repeatedly: the layers at the region's end that are not
//      convolutions (pooling, a shuffle, an activation) move behind the reformat, so the reformat
//      runs where it is cheapest (on a smaller tensor, or merged with a shuffle's copy).
// Convolutions are never peeled: they are why the region exists. The search is bounded
// (kMaxFormatTrials) so a graph of many small regions does not multiply the build time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "builder/graph.h"
#include "kiln/status.h"

namespace kiln {

// The regions of the layers marked in `channelsLast` (indexed by graph node): each a list of node
// indices in graph order; regions in the order of their first node.
std::vector<std::vector<int32_t>> channelsLastRegions(const Graph& graph,
                                                      const std::vector<bool>& channelsLast);

// The region's layers, other than convolutions, whose outputs no other layer of the region reads
// (their readers are outside it, or they are network outputs).
std::vector<int32_t> regionExits(const Graph& graph, const std::vector<int32_t>& region);

// A plan's timed cost with the marked nodes forced linear (indexed by graph node): the sum of its
// steps' timed medians, reformats included. `bound`: the best so far; an evaluation may stop once
// it knows it cannot beat it and report infinity.
using FormatTrial =
    std::function<Status(const std::vector<bool>& forceLinear, double bound, double& ms)>;

// An alternative is kept only when its plan is faster by this fraction of the best so far: two
// timings of the same kernel differ by about a percent, and the greedy plan is the one measured.
constexpr double kFormatGainWorthIt = 0.01;
constexpr int kMaxFormatTrials = 12;

// Starts from the greedy plan (`channelsLast` its channels-last layers, `greedyMs` its cost) and
// tries the alternatives above; `forceLinear` receives the layers the best plan forces linear
// (all false: the greedy plan) and `bestMs` its cost. `log` (may be empty) gets a line per trial.
Status searchFormatRegions(const Graph& graph, const std::vector<bool>& channelsLast,
                           double greedyMs, const FormatTrial& trial,
                           const std::function<void(const std::string&)>& log,
                           std::vector<bool>& forceLinear, double& bestMs);

}  // namespace kiln
