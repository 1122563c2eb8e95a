// See format_regions.h.
#include "builder/format_regions.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace kiln {
namespace {

int32_t findRoot(std::vector<int32_t>& parent, int32_t n) {
  while (parent[n] != n) n = parent[n] = parent[parent[n]];
  return n;
}

std::string msText(double ms) {
  if (!std::isfinite(ms))
    return "stopped once its steps cost more than the best less " +
           std::to_string(static_cast<int>(kFormatGainWorthIt * 100 + 0.5)) + "%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f ms", ms);
  return buf;
}

std::string describe(const Graph& graph, const std::vector<int32_t>& nodes) {
  std::string s = std::to_string(nodes.size()) + (nodes.size() == 1 ? " layer" : " layers");
  if (nodes.empty()) return s;
  s += ", '" + graph.nodes[nodes.front()].name + "'";
  if (nodes.size() > 1) s += " .. '" + graph.nodes[nodes.back()].name + "'";
  return s;
}

}  // namespace

std::vector<std::vector<int32_t>> channelsLastRegions(const Graph& graph,
                                                      const std::vector<bool>& channelsLast) {
  const int32_t n = static_cast<int32_t>(graph.nodes.size());
  std::vector<int32_t> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto marked = [&](int32_t i) {
    return i >= 0 && i < n && static_cast<size_t>(i) < channelsLast.size() && channelsLast[i];
  };
  for (int32_t i = 0; i < n; ++i) {
    if (!marked(i)) continue;
    for (int32_t t : graph.nodes[i].inputs) {
      const int32_t p = graph.tensors[t].producer;
      if (marked(p)) parent[findRoot(parent, i)] = findRoot(parent, p);
    }
  }
  std::vector<std::vector<int32_t>> regions;
  std::vector<int32_t> regionOfRoot(static_cast<size_t>(n), -1);
  for (int32_t i = 0; i < n; ++i) {
    if (!marked(i)) continue;
    int32_t& r = regionOfRoot[findRoot(parent, i)];
    if (r < 0) {
      r = static_cast<int32_t>(regions.size());
      regions.emplace_back();
    }
    regions[r].push_back(i);
  }
  return regions;
}

std::vector<int32_t> regionExits(const Graph& graph, const std::vector<int32_t>& region) {
  std::set<int32_t> readInside;
  for (int32_t i : region)
    for (int32_t t : graph.nodes[i].inputs) readInside.insert(t);
  std::vector<int32_t> exits;
  for (int32_t i : region) {
    const GraphNode& node = graph.nodes[i];
    if (node.type == LayerType::kCONVOLUTION) continue;
    bool readByRegion = false;
    for (int32_t t : node.outputs) readByRegion = readByRegion || readInside.count(t) > 0;
    if (!readByRegion) exits.push_back(i);
  }
  return exits;
}

Status searchFormatRegions(const Graph& graph, const std::vector<bool>& channelsLast,
                           double greedyMs, const FormatTrial& trial,
                           const std::function<void(const std::string&)>& log,
                           std::vector<bool>& forceLinear, double& bestMs) {
  forceLinear.assign(graph.nodes.size(), false);
  bestMs = greedyMs;
  auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  int trials = 0;
  // Tries `forceLinear` plus `nodes`; keeps it when faster by the margin.
  auto tryLinear = [&](const std::vector<int32_t>& nodes, const std::string& what,
                       bool& kept) -> Status {
    std::vector<bool> candidate = forceLinear;
    for (int32_t i : nodes) candidate[i] = true;
    double ms = std::numeric_limits<double>::infinity();
    ++trials;
    KILN_RETURN_IF_ERROR(trial(candidate, bestMs, ms));
    kept = ms < bestMs * (1.0 - kFormatGainWorthIt);
    say("  " + what + ": " + msText(ms) + " against " + msText(bestMs) +
        (kept ? ": taken" : ": not taken"));
    if (kept) {
      forceLinear = std::move(candidate);
      bestMs = ms;
    }
    return Status::ok();
  };

  const auto regions = channelsLastRegions(graph, channelsLast);
  for (size_t r = 0; r < regions.size(); ++r) {
    say("format region " + std::to_string(r + 1) + " of " + std::to_string(regions.size()) + " (" +
        describe(graph, regions[r]) + "), channels-last as the greedy rule made it");
    if (trials >= kMaxFormatTrials) {
      say("  not timed: the build already tried " + std::to_string(kMaxFormatTrials) +
          " format alternatives");
      continue;
    }
    bool kept = false;
    KILN_RETURN_IF_ERROR(tryLinear(regions[r], "all linear", kept));
    if (kept) continue;
    // Peel the region's tail while that pays.
    std::vector<int32_t> remaining = regions[r];
    while (trials < kMaxFormatTrials) {
      const std::vector<int32_t> exits = regionExits(graph, remaining);
      if (exits.empty()) break;
      KILN_RETURN_IF_ERROR(
          tryLinear(exits, "its exits linear (" + describe(graph, exits) + ")", kept));
      if (!kept) break;
      std::erase_if(remaining, [&](int32_t i) { return forceLinear[i]; });
    }
  }
  return Status::ok();
}

}  // namespace kiln
