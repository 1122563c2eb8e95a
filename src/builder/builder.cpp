#include "kiln/builder.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "builder/build_plan.h"
#include "builder/build_session.h"
#include "builder/format_regions.h"
#include "builder/graph_shapes.h"
#include "builder/in_place.h"
#include "builder/memory_planner.h"
#include "builder/network_impl.h"
#include "builder/passes/pipeline.h"
#include "builder/profile_build.h"
#include "builder/reshape_aliases.h"
#include "core/log.h"
#include "core/version.h"
#include "kiln/registry.h"

namespace kiln {

Status BuildSession::makePlan(plan::Plan& out) {
  out = plan::Plan();
  out.kilnVersion = kilnVersion();
  out.target = target_.planTarget;

  // Only tensors some step touches go into the plan; constants become weights.
  std::vector<int32_t> remap(tensors_.size(), -1);
  auto use = [&](int32_t b) {
    if (remap[b] >= 0) return remap[b];
    const BuildTensor& t = tensors_[b];
    plan::Tensor p;
    p.name = t.name;
    p.dims = t.dims;
    p.type = t.type;
    p.format = t.format;
    p.kind = t.kind;
    if (t.kind == plan::TensorKind::kCONSTANT) {
      p.weightIndex = static_cast<int32_t>(out.weights.size());
      out.weights.push_back(t.constant);
    }
    remap[b] = static_cast<int32_t>(out.tensors.size());
    out.tensors.push_back(std::move(p));
    return remap[b];
  };

  // Network inputs first, in declaration order, so binding order matches the network.
  for (int32_t g : graph_.inputs) {
    if (home_[g] < 0) continue;
    out.inputs.push_back(use(home_[g]));
    if (graph_.tensors[g].isShapeValue)
      out.shapeValueInputs.push_back({out.inputs.back(), graph_.tensors[g].shapeValues});
  }

  std::vector<plan::Step> steps;
  {
    PhaseScope phase(TracePhase::kSerialize);
    for (BuildStep& s : steps_) {
      plan::Step p;
      p.layerName = s.name;
      p.type = s.type;
      p.params = s.params;
      for (int32_t i : s.inputs) p.inputs.push_back(use(i));
      for (int32_t o : s.outputs) p.outputs.push_back(use(o));
      p.tactic = s.tactic;
      p.medianMs = s.medianMs;
      p.workspaceBytes = s.workspaceBytes;
      p.candidates = s.candidates;
      if (s.type == LayerType::kPLUGIN) {
        plan::PluginRecord record;
        record.name = s.chosen->name();
        record.version = s.chosen->version();
        record.pluginNamespace = s.chosen->pluginNamespace();
        KILN_RETURN_IF_ERROR(s.chosen->serialize(record.data));
        PluginCreatorInfo info;
        if (PluginRegistry::global().getCreatorInfo(record.name.c_str(), record.version.c_str(),
                                                    record.pluginNamespace.c_str(), info)) {
          record.libraryName = info.libraryName;
          record.libraryHash = info.libraryHash;
        }
        p.params = std::monostate{};
        p.pluginIndex = static_cast<int32_t>(out.plugins.size());
        out.plugins.push_back(std::move(record));
        s.chosen.reset();  // the chosen build object's work is done
      }
      out.maxWorkspaceBytes = std::max<uint64_t>(out.maxWorkspaceBytes, p.workspaceBytes);
      steps.push_back(std::move(p));
    }
  }
  for (int32_t b : outputTensors_) out.outputs.push_back(use(b));
  out.steps = std::move(steps);

  // Reshapes that move no bytes become aliases of their input (reshape_aliases.h): one arena
  // range per home tensor, live from its first writer to the last reader of any of its names.
  std::vector<int32_t> home = aliasReshapes(out);
  // Residuals written over in place where the tactic and liveness allow (in_place.h);
  // KILN_IN_PLACE=0 turns it off, to tell a wrong result of it from others.
  const char* inPlace = std::getenv("KILN_IN_PLACE");
  if (!inPlace || std::string(inPlace) != "0") aliasResidualsInPlace(out, *target_.backend, home);

  // Activation memory by liveness over the step order.
  std::vector<int32_t> activations;
  std::vector<LiveTensor> live;
  std::vector<int32_t> slot(out.tensors.size(), -1);
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    if (out.tensors[t].kind != plan::TensorKind::kACTIVATION || home[t] != int32_t(t)) continue;
    slot[t] = static_cast<int32_t>(live.size());
    activations.push_back(static_cast<int32_t>(t));
    LiveTensor l;
    l.bytes = static_cast<uint64_t>(plan::tensorBytes(out.tensors[t].dims, out.tensors[t].type));
    l.firstStep = -1;
    live.push_back(l);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(out.steps.size()); ++s) {
    for (int32_t o : out.steps[s].outputs) {
      const int32_t k = slot[home[o]];
      if (k >= 0 && live[k].firstStep < 0) live[k].firstStep = live[k].lastStep = s;
    }
    for (int32_t i : out.steps[s].inputs) {
      const int32_t k = slot[home[i]];
      if (k >= 0) live[k].lastStep = std::max(live[k].lastStep, s);
    }
  }
  for (LiveTensor& l : live) {
    if (l.firstStep < 0) l.firstStep = l.lastStep = 0;
  }
  const MemoryPlan memory = planMemory(live);
  for (size_t k = 0; k < activations.size(); ++k) {
    out.tensors[activations[k]].arenaOffset = memory.offsets[k];
  }
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    if (home[t] != int32_t(t)) out.tensors[t].arenaOffset = out.tensors[home[t]].arenaOffset;
  }
  out.arenaBytes = memory.arenaBytes;
  out.naiveActivationBytes = memory.naiveBytes;
  return Status::ok();
}

Status BuildSession::reportProgress(const char* phase, int32_t done, int32_t total,
                                    const std::string& layer) const {
  if (!config_.progress) return Status::ok();
  BuildProgress p;
  p.phase = phase;
  p.done = done;
  p.total = total;
  p.layer = layer.c_str();
  p.candidatesTimed = candidatesTimed_;
  p.elapsedSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (config_.progress(p)) return Status::ok();
  return cancelled(std::string("build cancelled by the progress callback during ") + phase +
                   (layer.empty() ? std::string() : " (after layer '" + layer + "')"));
}

namespace {

// The format decision timed across the graph (format_regions.h): `session` is the greedy lowering
// with its tactics chosen; each alternative is a whole lowering of its own whose unchanged steps
// take the memo's choices untimed, and the fastest plan's session replaces `session`. Plugin layers
// keep the greedy lowering's choice (reformats around them follow their neighbours).
Status timeFormatAlternatives(const Graph& graph, const BuilderConfig& config,
                              const BuildTarget& target, std::unique_ptr<BuildSession>& session) {
  if (!config.timeFormatAlternatives) return Status::ok();
  const std::vector<bool>& channelsLast = session->channelsLastNodes();
  if (std::find(channelsLast.begin(), channelsLast.end(), true) == channelsLast.end())
    return Status::ok();
  bool plugins = false;
  for (const GraphNode& node : graph.nodes) plugins = plugins || node.type == LayerType::kPLUGIN;
  StepMemo memo;
  session->recordChoices(memo);
  std::unique_ptr<BuildSession> best;  // the fastest alternative so far (null: the greedy one)
  auto trial = [&](const std::vector<bool>& forceLinear, double bound, double& ms) -> Status {
    auto alternative = std::make_unique<BuildSession>(graph, config, target);
    alternative->setForceLinear(forceLinear);
    alternative->setStepMemo(&memo);
    if (plugins) alternative->setPluginChoices(session.get(), 0);
    KILN_RETURN_IF_ERROR(alternative->lower());
    KILN_RETURN_IF_ERROR(alternative->chooseTactics(bound * (1.0 - kFormatGainWorthIt)));
    ms =
        alternative->abandoned() ? std::numeric_limits<double>::infinity() : alternative->timedMs();
    if (ms < bound * (1.0 - kFormatGainWorthIt)) best = std::move(alternative);
    return Status::ok();
  };
  auto log = [&](const std::string& line) {
    if (config.verbose) logMessage(Severity::kInfo, line);
  };
  std::vector<bool> forceLinear;
  double bestMs = 0;
  KILN_RETURN_IF_ERROR(
      searchFormatRegions(graph, channelsLast, session->timedMs(), trial, log, forceLinear, bestMs)
          .withContext("timing format alternatives"));
  // The plugin choices live in the greedy session's build objects, which `best` shares.
  if (best) session = std::move(best);
  return Status::ok();
}

}  // namespace

Status buildPlanFromGraph(const Graph& network, const BuilderConfig& config,
                          std::span<const passes::Pass> passes, std::vector<uint8_t>& bytes) {
  BuildTarget target;
  KILN_RETURN_IF_ERROR(resolveBuildTarget(config.target, target));
  if (config.timingRuns < 1 || config.warmupRuns < 0) {
    return invalidArgument("BuilderConfig: timingRuns must be >= 1 and warmupRuns >= 0");
  }
  // Dynamic inputs: one plan for the profiles' ranges (profile_build.h).
  if (!config.profiles.empty() || hasDynamicInputs(network))
    return buildProfilePlan(network, config, passes, target, bytes);
  // The passes rewrite the builder's copy; the network stays as its author wrote it. Plugin
  // definitions are shared with the network (shared_ptr), not cloned.
  Graph graph = network;
  std::vector<std::string> log;
  KILN_RETURN_IF_ERROR(passes::runPipeline(graph, passes, passes::PassLimits{},
                                           config.verbose ? &log : nullptr, target.device()));
  for (const std::string& line : log) logMessage(Severity::kInfo, line);
  auto session = std::make_unique<BuildSession>(graph, config, target);
  KILN_RETURN_IF_ERROR(session->lower());
  KILN_RETURN_IF_ERROR(session->chooseTactics());
  KILN_RETURN_IF_ERROR(timeFormatAlternatives(graph, config, target, session));
  plan::Plan plan;
  KILN_RETURN_IF_ERROR(session->makePlan(plan));
  KILN_RETURN_IF_ERROR(session->fitWorkspaces(plan));
  KILN_RETURN_IF_ERROR(plan::writePlan(plan, bytes));
  return session->reportProgress("plan", 1, 1, "");
}

namespace {

class Builder final : public IBuilder {
 public:
  Status buildSerializedNetwork(const INetworkDefinition& network, const BuilderConfig& config,
                                std::vector<uint8_t>& bytes) override {
    const NetworkImpl* impl = asNetworkImpl(network);
    if (!impl) return invalidArgument("buildSerializedNetwork: not a network made by kiln");
    if (!network.getLastError().isOk()) {
      return invalidArgument("the network has errors; the first was: " +
                             network.getLastError().message());
    }
    if (impl->graph().outputs.empty()) {
      return invalidArgument("the network has no outputs: mark at least one with markOutput()");
    }
    return buildPlanFromGraph(impl->graph(), config, passes::defaultPipeline(), bytes);
  }
};

}  // namespace

std::unique_ptr<IBuilder> createBuilder() { return std::make_unique<Builder>(); }

}  // namespace kiln
