#include "builder/profile_build.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "builder/format_regions.h"
#include "builder/graph_shapes.h"
#include "builder/passes/pipeline.h"
#include "core/byte_io.h"
#include "core/log.h"
#include "core/plan_codec.h"

namespace kiln {
namespace {

constexpr const char* kCornerNames[3] = {"min", "opt", "max"};

std::string profileName(size_t p) { return "profile " + std::to_string(p); }

std::string dynamicInputsText(const Graph& graph) {
  std::string s;
  for (int32_t i : graph.inputs) {
    const GraphTensor& t = graph.tensors[i];
    if (hasDynamicDim(t.declared))
      s += (s.empty() ? "'" : ", '") + t.name + "' is " + dimsStringTimes(t.declared);
  }
  return s;
}

Status checkInput(const GraphTensor& t, size_t p, const OptimizationProfile& profile,
                  std::array<Dims, 3>& dims) {
  const std::string where = profileName(p) + ": input '" + t.name + "'";
  for (int32_t c = 0; c < 3; ++c) {
    const Dims d = profile.getDimensions(t.name.c_str(), static_cast<OptProfileSelector>(c));
    if (d.nbDims < 0)
      return invalidArgument(where + " has no " + kCornerNames[c] +
                             " shape; give min, opt and max for each dynamic input "
                             "(OptimizationProfile::setDimensions)");
    if (d.nbDims != t.declared.nbDims)
      return invalidArgument(where + ": its " + kCornerNames[c] + " shape " + dimsStringTimes(d) +
                             " has rank " + std::to_string(d.nbDims) + ", the input " +
                             std::to_string(t.declared.nbDims) + " (" +
                             dimsStringTimes(t.declared) + ")");
    for (int32_t k = 0; k < d.nbDims; ++k) {
      if (t.declared.d[k] >= 0 && d.d[k] != t.declared.d[k])
        return invalidArgument(where + " axis " + std::to_string(k) + " is fixed at " +
                               std::to_string(t.declared.d[k]) + " in the network, but the " +
                               kCornerNames[c] + " shape gives " + std::to_string(d.d[k]));
      if (d.d[k] < 0)
        return invalidArgument(where + " axis " + std::to_string(k) + ": the " + kCornerNames[c] +
                               " shape gives the negative value " + std::to_string(d.d[k]));
    }
    dims[static_cast<size_t>(c)] = d;
  }
  for (int32_t k = 0; k < t.declared.nbDims; ++k) {
    const int64_t lo = dims[0].d[k], mid = dims[1].d[k], hi = dims[2].d[k];
    if (lo > mid || mid > hi)
      return invalidArgument(where + " axis " + std::to_string(k) + ": min " + std::to_string(lo) +
                             ", opt " + std::to_string(mid) + ", max " + std::to_string(hi) +
                             " do not satisfy min <= opt <= max");
  }
  return Status::ok();
}

// Dims that share a name must be equal: their ranges are narrowed to the intersection, which must
// be non-empty and hold both opts, which must be equal (the builder lowers the network there).
Status narrowNamedDims(const Graph& graph, size_t p, ResolvedProfile& r) {
  struct Use {
    std::string input;
    int32_t axis;
  };
  std::map<std::string, std::vector<Use>> uses;
  for (int32_t i : graph.inputs) {
    const GraphTensor& t = graph.tensors[i];
    for (int32_t k = 0; k < static_cast<int32_t>(t.dimNames.size()); ++k)
      if (!t.dimNames[k].empty()) uses[t.dimNames[k]].push_back({t.name, k});
  }
  for (const auto& [name, list] : uses) {
    if (list.size() < 2) continue;
    int64_t lo = 0, hi = INT64_MAX;
    const Dims& firstOpt = r.inputs[list[0].input][1];
    for (const Use& u : list) {
      const auto& d = r.inputs[u.input];
      lo = std::max(lo, d[0].d[u.axis]);
      hi = std::min(hi, d[2].d[u.axis]);
      if (d[1].d[u.axis] != firstOpt.d[list[0].axis])
        return invalidArgument(profileName(p) + ": input '" + u.input + "' axis " +
                               std::to_string(u.axis) + " and input '" + list[0].input + "' axis " +
                               std::to_string(list[0].axis) + " are both '" + name +
                               "' but their opt values differ (" + std::to_string(d[1].d[u.axis]) +
                               " and " + std::to_string(firstOpt.d[list[0].axis]) + ")");
    }
    if (lo > hi)
      return invalidArgument(profileName(p) + ": the inputs' dims named '" + name +
                             "' must be equal, but their profile ranges do not overlap (input '" +
                             list[0].input + "' axis " + std::to_string(list[0].axis) + " and " +
                             std::to_string(list.size() - 1) + " more)");
    for (const Use& u : list) {
      auto& d = r.inputs[u.input];
      d[0].d[u.axis] = lo;
      d[2].d[u.axis] = hi;
    }
  }
  return Status::ok();
}

// Params compared by their plan encoding: the one definition of a layer's fields.
bool sameParams(const BuildStep& a, const BuildStep& b) {
  std::vector<uint8_t> x, y;
  ByteWriter wx(x), wy(y);
  if (!plan::writeLayerParams(wx, a.type, a.params) ||
      !plan::writeLayerParams(wy, b.type, b.params))
    return false;
  return x == y;
}

// Empty when `other` lowered to the same steps as `ref` (dims aside), else what differs.
std::string structureDifference(const BuildSession& ref, const BuildSession& other) {
  const auto& rs = ref.buildSteps();
  const auto& os = other.buildSteps();
  const auto& rt = ref.buildTensors();
  const auto& ot = other.buildTensors();
  if (rs.size() != os.size() || rt.size() != ot.size())
    return "it lowers to " + std::to_string(os.size()) + " steps, the opt shapes of profile 0 to " +
           std::to_string(rs.size());
  for (size_t s = 0; s < rs.size(); ++s) {
    const BuildStep& a = rs[s];
    const BuildStep& b = os[s];
    const std::string what =
        "step " + std::to_string(s) + " ('" + a.name + "', " + layerTypeName(a.type) + ")";
    if (a.type != b.type || a.name != b.name || a.inputs != b.inputs || a.outputs != b.outputs)
      return what + " is another layer there ('" + b.name + "', " + layerTypeName(b.type) + ")";
    if (!sameParams(a, b))
      return what + " gets other parameters there (shape arithmetic folded at build time)";
  }
  for (size_t t = 0; t < rt.size(); ++t) {
    const BuildTensor& a = rt[t];
    const BuildTensor& b = ot[t];
    if (a.type != b.type || a.format != b.format || a.kind != b.kind)
      return "tensor '" + a.name + "' gets another type, format or kind there";
    if (a.kind == plan::TensorKind::kCONSTANT && a.constant != b.constant &&
        (!a.constant || !b.constant || *a.constant != *b.constant))
      return "constant '" + a.name + "' has other values there (it depends on the input shapes)";
  }
  return "";
}

// One lowering of the graph at one corner of one profile.
// A format alternative's lowerings share the corners' passed graphs (shared_ptr), each with a
// session of its own.
struct Corner {
  std::shared_ptr<Graph> graph;
  std::unique_ptr<BuildSession> session;
};
using Corners = std::vector<std::array<Corner, 3>>;

// The graph specialized at one corner: its shapes, before any pass.
Status specializeAt(const Graph& network, const ResolvedProfile& profile, int32_t c,
                    const std::string& where, Corner& out) {
  std::map<std::string, Dims> dims;
  for (const auto& [name, d] : profile.inputs) dims[name] = d[static_cast<size_t>(c)];
  out.graph = std::make_shared<Graph>(network);
  return specializeGraph(*out.graph, dims, where);
}

// Every tensor's dims at every corner (GraphTensor::rangeDims), given to each corner's graph.
void shareRangeDims(Corners& corners) {
  const size_t count = corners[0][0].graph->tensors.size();
  std::vector<std::vector<Dims>> range(count);
  for (const auto& profile : corners)
    for (const Corner& corner : profile)
      for (size_t t = 0; t < count && t < corner.graph->tensors.size(); ++t)
        range[t].push_back(corner.graph->tensors[t].shape.dims);
  for (auto& profile : corners)
    for (Corner& corner : profile)
      for (size_t t = 0; t < count && t < corner.graph->tensors.size(); ++t)
        corner.graph->tensors[t].rangeDims = range[t];
}

// The specialized graph passed, and its build session made.
Status passAt(const BuilderConfig& config, std::span<const passes::Pass> passes,
              const BuildTarget& target, const std::string& where, bool log, Corner& out) {
  std::vector<std::string> lines;
  KILN_RETURN_IF_ERROR(passes::runPipeline(*out.graph, passes, passes::PassLimits{},
                                           log && config.verbose ? &lines : nullptr,
                                           target.device())
                           .withContext(where));
  for (const std::string& line : lines) logMessage(Severity::kInfo, line);
  out.session = std::make_unique<BuildSession>(*out.graph, config, target);
  return Status::ok();
}

// Each plugin layer's tensors at min, opt and max of each profile, read from the passed graphs.
Status pluginBoxes(const Corners& corners, PluginBoxes& boxes) {
  boxes.clear();
  for (size_t p = 0; p < corners.size(); ++p) {
    for (int32_t c = 0; c < 3; ++c) {
      const Graph& g = *corners[p][static_cast<size_t>(c)].graph;
      for (const GraphNode& node : g.nodes) {
        if (node.type != LayerType::kPLUGIN) continue;
        auto& perProfile = boxes[node.name];
        perProfile.resize(corners.size());
        auto& tensors = perProfile[p];
        std::vector<int32_t> all = node.inputs;
        all.insert(all.end(), node.outputs.begin(), node.outputs.end());
        tensors.resize(all.size());
        for (size_t i = 0; i < all.size(); ++i)
          tensors[i][static_cast<size_t>(c)] = g.tensors[all[i]].shape.dims;
      }
    }
  }
  for (const auto& [name, perProfile] : boxes)
    for (const auto& tensors : perProfile)
      if (tensors.empty() || tensors.size() != perProfile[0].size())
        return unsupported("plugin layer '" + name +
                           "' is not the same in the network at every profile's shapes");
  return Status::ok();
}

// Lowers every corner; each must agree with profile 0's opt lowering step for step. `choices`: the
// lowering whose plugin choices all take (null: profile 0's opt lowering chooses).
Status lowerCorners(Corners& corners, const BuildSession* choices) {
  const BuildSession& reference = *corners[0][1].session;
  const BuildSession* from = choices ? choices : &reference;
  for (size_t p = 0; p < corners.size(); ++p) {
    for (int32_t c : {1, 0, 2}) {
      const std::string where = profileName(p) + "'s " + kCornerNames[c] + " shapes";
      BuildSession& session = *corners[p][static_cast<size_t>(c)].session;
      if (&session != from) session.setPluginChoices(from, p);
      KILN_RETURN_IF_ERROR(session.lower().withContext(where));
      const std::string diff = structureDifference(reference, session);
      if (!diff.empty())
        return unsupported("the network is not the same at " + where +
                           " as at profile 0's opt: " + diff +
                           ". kiln serves a range of shapes with one list of steps; this network "
                           "needs its shape arithmetic carried to run time, which is not built "
                           "yet: narrow the profile or build for static shapes");
    }
  }
  return Status::ok();
}

constexpr double kNoBound = std::numeric_limits<double>::infinity();

// Each profile's tactics, timed at its opt shapes among those that accept its min and max; `ms`
// gets the plans' summed cost (every profile weighs the same), infinity once it passes `bound`.
// `memos` (may be null): one per profile, as the static build's format alternatives use them.
Status chooseTacticsAtOpt(Corners& corners, std::vector<StepMemo>* memos, double bound,
                          double& ms) {
  ms = 0;
  for (size_t p = 0; p < corners.size(); ++p) {
    BuildSession& opt = *corners[p][1].session;
    opt.setCorners({{"min", corners[p][0].session.get()}, {"max", corners[p][2].session.get()}});
    if (memos) opt.setStepMemo(&(*memos)[p]);
    KILN_RETURN_IF_ERROR(opt.chooseTactics(bound - ms).withContext(profileName(p)));
    if (opt.abandoned()) {
      ms = kNoBound;
      return Status::ok();
    }
    ms += opt.timedMs();
    if (ms > bound) {
      ms = kNoBound;
      return Status::ok();
    }
  }
  return Status::ok();
}

// Memory at max: the max lowering, with the opt lowering's tactics, planned like a static plan.
Status planAtMax(const BuildSession& opt, BuildSession& max, plan::Plan& atMax) {
  const auto& chosen = opt.buildSteps();
  for (size_t s = 0; s < chosen.size(); ++s) {
    max.buildSteps()[s].tactic = chosen[s].tactic;
    max.buildSteps()[s].workspaceBytes = chosen[s].workspaceBytes;
  }
  return max.makePlan(atMax);
}

// The format decision timed across the graph as a static build makes it (builder.cpp,
// format_regions.h), for all profiles at once: an alternative is lowered at every corner with the
// same layers forced linear, takes the greedy lowering's plugin choices, and costs the profiles'
// plans summed at their opt shapes. The fastest replaces the corners' sessions.
Status timeFormatAlternatives(const BuilderConfig& config, const BuildTarget& target,
                              Corners& corners, double greedyMs) {
  if (!config.timeFormatAlternatives) return Status::ok();
  const BuildSession& greedy = *corners[0][1].session;
  const std::vector<bool>& channelsLast = greedy.channelsLastNodes();
  if (std::find(channelsLast.begin(), channelsLast.end(), true) == channelsLast.end())
    return Status::ok();
  std::vector<StepMemo> memos(corners.size());
  for (size_t p = 0; p < corners.size(); ++p) corners[p][1].session->recordChoices(memos[p]);
  Corners best;  // the fastest alternative so far (empty: the greedy lowerings)
  auto trial = [&](const std::vector<bool>& forceLinear, double bound, double& ms) -> Status {
    Corners alternative(corners.size());
    for (size_t p = 0; p < corners.size(); ++p) {
      for (size_t c = 0; c < 3; ++c) {
        alternative[p][c].graph = corners[p][c].graph;
        alternative[p][c].session =
            std::make_unique<BuildSession>(*corners[p][c].graph, config, target);
        alternative[p][c].session->setForceLinear(forceLinear);
      }
    }
    KILN_RETURN_IF_ERROR(lowerCorners(alternative, &greedy));
    const double worthIt = bound * (1.0 - kFormatGainWorthIt);
    KILN_RETURN_IF_ERROR(chooseTacticsAtOpt(alternative, &memos, worthIt, ms));
    if (ms < worthIt) best = std::move(alternative);
    return Status::ok();
  };
  auto log = [&](const std::string& line) {
    if (config.verbose) logMessage(Severity::kInfo, line);
  };
  std::vector<bool> forceLinear;
  double bestMs = 0;
  KILN_RETURN_IF_ERROR(searchFormatRegions(*corners[0][1].graph, channelsLast, greedyMs, trial, log,
                                           forceLinear, bestMs)
                           .withContext("timing format alternatives across the profiles"));
  // The plugin choices live in the greedy lowering's build objects, which `best` shares.
  if (!best.empty()) corners = std::move(best);
  return Status::ok();
}
}  // namespace

Status resolveProfiles(const Graph& graph, const std::vector<OptimizationProfile>& profiles,
                       std::vector<ResolvedProfile>& out) {
  out.clear();
  const bool dynamic = hasDynamicInputs(graph);
  if (profiles.empty()) {
    if (!dynamic) return Status::ok();
    return invalidArgument("the network has dynamic inputs (" + dynamicInputsText(graph) +
                           "): add an optimization profile with min, opt and max shapes for "
                           "each (BuilderConfig::profiles; kiln build --shapes NAME:MIN,OPT,MAX)");
  }
  if (!dynamic)
    return invalidArgument(
        "optimization profiles are given but no network input has a dynamic (-1) dim");
  for (size_t p = 0; p < profiles.size(); ++p) {
    ResolvedProfile r;
    for (const std::string& name : profiles[p].inputNames()) {
      bool found = false;
      for (int32_t i : graph.inputs) found = found || graph.tensors[i].name == name;
      if (!found)
        return invalidArgument(profileName(p) + " gives shapes for '" + name +
                               "', which is no network input");
    }
    for (int32_t i : graph.inputs) {
      const GraphTensor& t = graph.tensors[i];
      const bool isDynamic = hasDynamicDim(t.declared);
      std::array<Dims, 3> dims{t.declared, t.declared, t.declared};
      const bool given =
          profiles[p].getDimensions(t.name.c_str(), OptProfileSelector::kMIN).nbDims >= 0 ||
          profiles[p].getDimensions(t.name.c_str(), OptProfileSelector::kOPT).nbDims >= 0 ||
          profiles[p].getDimensions(t.name.c_str(), OptProfileSelector::kMAX).nbDims >= 0;
      if (isDynamic || given) KILN_RETURN_IF_ERROR(checkInput(t, p, profiles[p], dims));
      r.inputs[t.name] = dims;
    }
    KILN_RETURN_IF_ERROR(narrowNamedDims(graph, p, r));
    out.push_back(std::move(r));
  }
  return Status::ok();
}

Status buildProfilePlan(const Graph& network, const BuilderConfig& config,
                        std::span<const passes::Pass> passes, const BuildTarget& target,
                        std::vector<uint8_t>& bytes) {
  std::vector<ResolvedProfile> profiles;
  KILN_RETURN_IF_ERROR(resolveProfiles(network, config.profiles, profiles));
  // corners[p][c]: profile p at min (0), opt (1) and max (2). Every corner is specialized and
  // passed first, so that plugins are configured with each profile's whole box (DESIGN.md §7).
  Corners corners(profiles.size());
  for (size_t p = 0; p < profiles.size(); ++p)
    for (int32_t c : {1, 0, 2})
      KILN_RETURN_IF_ERROR(specializeAt(network, profiles[p], c,
                                        profileName(p) + "'s " + kCornerNames[c] + " shapes",
                                        corners[p][static_cast<size_t>(c)]));
  shareRangeDims(corners);
  for (size_t p = 0; p < profiles.size(); ++p)
    for (int32_t c : {1, 0, 2})
      KILN_RETURN_IF_ERROR(passAt(config, passes, target,
                                  profileName(p) + "'s " + kCornerNames[c] + " shapes",
                                  p == 0 && c == 1, corners[p][static_cast<size_t>(c)]));
  PluginBoxes boxes;
  KILN_RETURN_IF_ERROR(pluginBoxes(corners, boxes));
  // Profile 0's opt lowering chooses each plugin's combination; every other lowering takes it.
  BuildSession& chooser = *corners[0][1].session;
  chooser.setPluginBoxes(std::move(boxes));
  KILN_RETURN_IF_ERROR(lowerCorners(corners, nullptr));
  double greedyMs = 0;
  KILN_RETURN_IF_ERROR(chooseTacticsAtOpt(corners, nullptr, kNoBound, greedyMs));
  KILN_RETURN_IF_ERROR(timeFormatAlternatives(config, target, corners, greedyMs));

  plan::Plan plan;
  KILN_RETURN_IF_ERROR(corners[0][1].session->makePlan(plan));
  std::map<std::string, const GraphTensor*> networkInputs;
  for (int32_t i : network.inputs) networkInputs[network.tensors[i].name] = &network.tensors[i];
  plan.maxWorkspaceBytes = 0;  // the profiles' largest, after their workspaces are fitted
  for (size_t p = 0; p < profiles.size(); ++p) {
    BuildSession& opt = *corners[p][1].session;
    plan::Plan atMax;
    KILN_RETURN_IF_ERROR(planAtMax(opt, *corners[p][2].session, atMax));
    // The workspace against that arena (workspace_choice.cpp). A tactic it changes keeps the
    // chosen one's in-place residual, so the memory planned above stands.
    KILN_RETURN_IF_ERROR(opt.fitProfileWorkspace(atMax.arenaBytes).withContext(profileName(p)));
    const auto& chosen = opt.buildSteps();
    plan::Profile prof;
    for (size_t s = 0; s < chosen.size(); ++s) {
      prof.tactics.push_back(chosen[s].tactic);
      prof.workspaceBytes = std::max<uint64_t>(prof.workspaceBytes, chosen[s].workspaceBytes);
      if (p == 0) {  // the plan's steps record profile 0's choices
        plan.steps[s].tactic = chosen[s].tactic;
        plan.steps[s].medianMs = chosen[s].medianMs;
        plan.steps[s].workspaceBytes = chosen[s].workspaceBytes;
      }
    }
    if (atMax.tensors.size() != plan.tensors.size())
      return internalError("profile plan: the max lowering has another tensor list");
    for (const plan::Tensor& t : atMax.tensors) prof.arenaOffsets.push_back(t.arenaOffset);
    prof.arenaBytes = atMax.arenaBytes;
    // The dynamic inputs (fixed dims are equal in min, opt and max: resolveProfiles checked).
    for (int32_t t : plan.inputs) {
      const GraphTensor& input = *networkInputs.at(plan.tensors[t].name);
      const auto& d = profiles[p].inputs.at(input.name);
      if (hasDynamicDim(input.declared)) prof.inputs.push_back({t, d[0], d[1], d[2]});
    }
    plan.maxWorkspaceBytes = std::max(plan.maxWorkspaceBytes, prof.workspaceBytes);
    if (p == 0) {
      // The plan's own memory fields are profile 0's, planned at its max.
      for (size_t t = 0; t < plan.tensors.size(); ++t)
        plan.tensors[t].arenaOffset = prof.arenaOffsets[t];
      plan.arenaBytes = prof.arenaBytes;
      plan.naiveActivationBytes = atMax.naiveActivationBytes;
    }
    plan.profiles.push_back(std::move(prof));
  }
  // Named dims: each later use must equal the first.
  std::map<std::string, std::pair<int32_t, int32_t>> first;
  for (int32_t t : plan.inputs) {
    const GraphTensor& g = *networkInputs.at(plan.tensors[t].name);
    for (int32_t k = 0; k < static_cast<int32_t>(g.dimNames.size()); ++k) {
      if (g.dimNames[k].empty()) continue;
      auto [it, isFirst] = first.emplace(g.dimNames[k], std::make_pair(t, k));
      if (!isFirst)
        plan.equalities.push_back({it->second.first, it->second.second, t, k, g.dimNames[k]});
    }
  }
  KILN_RETURN_IF_ERROR(plan::writePlan(plan, bytes));
  return corners[0][1].session->reportProgress("plan", 1, 1, "");
}

}  // namespace kiln
