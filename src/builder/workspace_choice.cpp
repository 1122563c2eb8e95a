// The memory side of the tactic choice (static plans). The fastest tactic of a layer may ask for
// far more scratch than its neighbours: at ResNet-50 batch 64, cuDNN's fastest algorithm for the
// 7x7 stem over 3 channels wanted 122.5 MiB, where the activations live at that step leave a
// 42.8 MiB hole in the arena, so that one layer made every context 80 MiB larger. The engine puts
// each step's workspace in a hole of the arena (runtime/workspace_placement.h); a workspace that
// fits none grows the arena. So once the plan's memory is laid out, a step whose workspace grows
// the arena takes, from its timed candidates, the fastest one whose workspace fits and whose extra
// time is within tradeAllowanceMs (a share of the layer's time, or of the plan's in proportion to
// the memory saved), largest growth first, while any of at least kWorkspaceGrowthWorthTime
// remains; the verbose log says what it gave and what it saved.
// Profile plans keep one workspace per context beside the arena, sized to the largest step's at
// the profile's corners: there the step whose workspace exceeds every other's by
// kWorkspaceGrowthWorthTime takes, by the same rule, the fastest candidate (accepting the corners)
// whose workspace does not (fitProfileWorkspace).
#include "builder/workspace_choice.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "builder/build_session.h"
#include "core/log.h"
#include "ops/op_table.h"
#include "runtime/workspace_placement.h"

namespace kiln {
namespace {

std::string mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

}  // namespace

std::string workspaceFitKey(const std::string& configKey) {
  return configKey.empty() ? configKey : configKey + "|workspace-fit";
}

std::vector<plan::Candidate> withRememberedFit(std::vector<plan::Candidate> candidates,
                                               const TimingCache& cache,
                                               const std::string& fitKey) {
  std::string tactic;
  double ms = 0;
  if (fitKey.empty() || !cache.find(fitKey, tactic, ms)) return candidates;
  for (const plan::Candidate& c : candidates)
    if (c.name == tactic) return candidates;
  plan::Candidate remembered;
  remembered.name = tactic;
  remembered.medianMs = ms;
  candidates.push_back(std::move(remembered));
  return candidates;
}

double tradeAllowanceMs(double layerMs, double planMs, uint64_t growth, uint64_t arenaBytes) {
  const double memoryShare =
      growth == 0 ? 0.0 : static_cast<double>(growth) / (static_cast<double>(arenaBytes) + growth);
  return std::max(layerMs * kWorkspaceTimeTolerance,
                  planMs * kPlanTimePerMemoryShare * memoryShare);
}

WorkspaceExcess largestWorkspaceExcess(const std::vector<uint64_t>& workspaces) {
  WorkspaceExcess e;
  uint64_t largest = 0;
  for (size_t s = 0; s < workspaces.size(); ++s) {
    if (workspaces[s] > largest) {
      e.others = largest;
      largest = workspaces[s];
      e.step = s;
    } else {
      e.others = std::max(e.others, workspaces[s]);
    }
  }
  e.excess = largest - e.others;
  return e;
}

const plan::Candidate* fittingCandidate(
    const std::vector<plan::Candidate>& candidates, const std::string& chosen, double chosenMs,
    double allowanceMs, const std::function<bool(const plan::Candidate&, uint64_t&)>& workspaceOf,
    const std::function<bool(uint64_t)>& fits, uint64_t* workspace) {
  std::vector<const plan::Candidate*> order;
  for (const plan::Candidate& c : candidates)
    if (c.rejectedBecause.empty() && c.name != chosen && c.medianMs <= chosenMs + allowanceMs)
      order.push_back(&c);
  std::stable_sort(
      order.begin(), order.end(),
      [](const plan::Candidate* a, const plan::Candidate* b) { return a->medianMs < b->medianMs; });
  for (const plan::Candidate* c : order) {
    uint64_t bytes = 0;
    if (workspaceOf(*c, bytes) && fits(bytes)) {
      if (workspace) *workspace = bytes;
      return c;
    }
  }
  return nullptr;
}

bool BuildSession::tradeForWorkspace(size_t index, const Tactic& chosen, double allowanceMs,
                                     const std::function<bool(uint64_t)>& fits,
                                     plan::Candidate& picked, uint64_t& bytes) {
  const BuildStep& step = steps_[index];
  const std::span<const Tactic> tactics = target_.backend->tactics(step.type);
  const KernelConfig config = kernelConfig(step);
  std::vector<std::pair<std::string, KernelConfig>> corners;
  for (const auto& [name, session] : corners_)
    corners.emplace_back(name, session->kernelConfig(session->steps_[index]));
  const auto workspaceOf = [&](const plan::Candidate& c, uint64_t& ask) {
    const Tactic* tactic = ops::findTactic(tactics, c.name);
    // A layer written over its residual in place keeps a tactic that allows it.
    if (!tactic || (chosen.residualInPlace && !tactic->residualInPlace)) return false;
    std::string why;
    const KernelPtr kernel = tactic->create(config, &why);
    if (!kernel) return false;
    ask = kernel->workspaceSize();
    return declineAtCorners(*tactic, corners, config_.maxWorkspaceBytes, ask).empty();
  };
  const std::string fitKey = workspaceFitKey(TimingCache::key(*target_.backend, config));
  const std::vector<plan::Candidate> candidates =
      withRememberedFit(step.candidates, timingCache_, fitKey);
  const plan::Candidate* c = fittingCandidate(candidates, step.tactic, step.medianMs, allowanceMs,
                                              workspaceOf, fits, &bytes);
  if (!c) return false;
  picked = *c;
  timingCache_.record(fitKey, picked.name, picked.medianMs);
  return true;
}

Status BuildSession::fitWorkspaces(plan::Plan& plan) {
  if (!plan.profiles.empty() || plan.steps.size() != steps_.size()) return Status::ok();
  std::vector<bool> tried(plan.steps.size(), false);
  bool changedCache = false;
  const auto done = [&] {
    return changedCache && !config_.timingCachePath.empty()
               ? timingCache_.save(config_.timingCachePath)
               : Status::ok();
  };
  for (;;) {
    std::vector<uint64_t> asks = builtinStepWorkspaces(plan);
    const WorkspacePlacement placed = placeWorkspacesInArena(plan, asks);
    if (placed.arenaBytes <= plan.arenaBytes) return done();
    // The untried step that grows the arena most.
    size_t worst = plan.steps.size();
    uint64_t growth = 0;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const uint64_t end = placed.offsets[s] + asks[s];
      if (!tried[s] && asks[s] > 0 && end > plan.arenaBytes && end - plan.arenaBytes > growth) {
        growth = end - plan.arenaBytes;
        worst = s;
      }
    }
    if (worst == plan.steps.size() || !growthWorthTime(growth)) return done();
    tried[worst] = true;
    plan::Step& step = plan.steps[worst];
    const std::span<const Tactic> tactics = target_.backend->tactics(step.type);
    const Tactic* chosen = ops::findTactic(tactics, step.tactic);
    if (!chosen) continue;
    const auto fits = [&](uint64_t bytes) {
      asks[worst] = bytes;
      const WorkspacePlacement trial = placeWorkspacesInArena(plan, asks);
      return trial.offsets[worst] + bytes <= plan.arenaBytes;
    };
    double planMs = 0;
    for (const plan::Step& s : plan.steps) planMs += s.medianMs;
    const double allowanceMs = tradeAllowanceMs(step.medianMs, planMs, growth, plan.arenaBytes);
    plan::Candidate picked;
    uint64_t bytes = 0;
    if (tradeForWorkspace(worst, *chosen, allowanceMs, fits, picked, bytes)) {
      logVerbose("layer '" + step.layerName + "': " + picked.name + " (" +
                 std::to_string(picked.medianMs) + " ms, workspace " + mib(bytes) +
                 ") instead of " + step.tactic + " (" + std::to_string(step.medianMs) +
                 " ms, workspace " + mib(step.workspaceBytes) +
                 "), whose workspace would grow every context by " + mib(growth) + " (" +
                 mib(plan.arenaBytes) + " without it; " + std::to_string(allowanceMs) +
                 " ms of the plan's " + std::to_string(planMs) + " allowed for it)");
      changedCache = true;
      step.tactic = steps_[worst].tactic = picked.name;
      step.medianMs = steps_[worst].medianMs = picked.medianMs;
      step.workspaceBytes = steps_[worst].workspaceBytes = bytes;
    } else {
      logVerbose("layer '" + step.layerName + "' keeps " + step.tactic + " (workspace " +
                 mib(step.workspaceBytes) + ", growing every context by " + mib(growth) +
                 "): no other timed candidate fits within " + std::to_string(allowanceMs) +
                 " ms more");
    }
    plan.maxWorkspaceBytes = 0;
    for (const plan::Step& s : plan.steps)
      plan.maxWorkspaceBytes = std::max<uint64_t>(plan.maxWorkspaceBytes, s.workspaceBytes);
  }
}

Status BuildSession::fitProfileWorkspace(uint64_t arenaBytes) {
  std::vector<bool> tried(steps_.size(), false);
  bool changedCache = false;
  for (;;) {
    std::vector<uint64_t> workspaces;
    for (const BuildStep& s : steps_) workspaces.push_back(s.workspaceBytes);
    const WorkspaceExcess e = largestWorkspaceExcess(workspaces);
    const size_t worst = e.step;
    const uint64_t growth = e.excess, others = e.others;
    if (worst >= steps_.size() || tried[worst] || steps_[worst].type == LayerType::kPLUGIN ||
        !growthWorthTime(growth))
      break;
    tried[worst] = true;
    BuildStep& step = steps_[worst];
    const std::span<const Tactic> tactics = target_.backend->tactics(step.type);
    const Tactic* chosen = ops::findTactic(tactics, step.tactic);
    if (!chosen) break;
    const auto fits = [&](uint64_t bytes) { return bytes <= others; };
    const double planMs = timedMs();
    const double allowanceMs = tradeAllowanceMs(step.medianMs, planMs, growth, arenaBytes + others);
    plan::Candidate picked;
    uint64_t bytes = 0;
    if (!tradeForWorkspace(worst, *chosen, allowanceMs, fits, picked, bytes)) {
      logVerbose("layer '" + step.name + "' keeps " + step.tactic + " (workspace " +
                 mib(step.workspaceBytes) + " at the profile's corners, " + mib(growth) +
                 " more than any other step's): no other timed candidate fits within " +
                 std::to_string(allowanceMs) + " ms more");
      continue;
    }
    logVerbose("layer '" + step.name + "': " + picked.name + " (" +
               std::to_string(picked.medianMs) + " ms, workspace " + mib(bytes) + ") instead of " +
               step.tactic + " (" + std::to_string(step.medianMs) + " ms, workspace " +
               mib(step.workspaceBytes) +
               "), whose workspace would make every context of the profile " + mib(growth) +
               " larger (" + std::to_string(allowanceMs) + " ms of the plan's " +
               std::to_string(planMs) + " allowed for it)");
    changedCache = true;
    step.tactic = picked.name;
    step.medianMs = picked.medianMs;
    step.workspaceBytes = bytes;
  }
  return changedCache && !config_.timingCachePath.empty()
             ? timingCache_.save(config_.timingCachePath)
             : Status::ok();
}

}  // namespace kiln
