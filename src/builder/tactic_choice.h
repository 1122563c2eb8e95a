// Choosing among a backend's tactics for one built-in step, shared by the CPU path
// (tactic_selection.cpp) and the CUDA path (cuda_tactic_selection.cpp): a timing-cache hit for a
// tactic that still accepts the configuration wins outright; otherwise every tactic is asked in
// order, each rejection is kept with its reason (verbose log, `kiln inspect`), the accepted ones
// are timed by the caller's `time(kernel, ms)`, and the fastest is chosen and cached.
#pragma once

#include <limits>
#include <span>
#include <string>

#include "builder/build_session.h"

namespace kiln {

template <typename Tactic, typename Time>
Status BuildSession::chooseFastest(BuildStep& step, const KernelConfig& config,
                                   std::span<const Tactic> tactics, const char* backend,
                                   Time&& time) {
  const std::string cacheKey = config_.timingCachePath.empty() ? "" : TimingCache::key(config);
  std::string cachedTactic;
  double cachedMs = 0;
  if (!cacheKey.empty() && timingCache_.find(cacheKey, cachedTactic, cachedMs)) {
    for (const Tactic& tactic : tactics) {
      if (cachedTactic != tactic.name) continue;
      std::string why;
      auto kernel = tactic.create(config, &why);
      if (kernel && kernel->workspaceSize() <= config_.maxWorkspaceBytes) {
        step.tactic = tactic.name;
        step.medianMs = cachedMs;
        step.workspaceBytes = kernel->workspaceSize();
        step.candidates.push_back({tactic.name, cachedMs, ""});
        logVerbose(std::string("layer '") + step.name + "' (" + layerTypeName(step.type) +
                   "): chose " + step.tactic + " at " + std::to_string(cachedMs) +
                   " ms (from the timing cache)");
        return Status::ok();
      }
    }
  }

  double best = std::numeric_limits<double>::infinity();
  std::string reasons;
  for (const Tactic& tactic : tactics) {
    plan::Candidate candidate;
    candidate.name = tactic.name;
    std::string why;
    auto kernel = tactic.create(config, &why);
    if (kernel && kernel->workspaceSize() > config_.maxWorkspaceBytes) {
      why = "needs " + std::to_string(kernel->workspaceSize()) +
            " workspace bytes, more than the builder's limit";
      kernel.reset();
    }
    if (!kernel) {
      candidate.rejectedBecause = why.empty() ? "declined" : why;
      logVerbose("  layer '" + step.name + "': tactic " + tactic.name +
                 " rejected: " + candidate.rejectedBecause);
      reasons +=
          std::string(reasons.empty() ? "" : "; ") + tactic.name + ": " + candidate.rejectedBecause;
      step.candidates.push_back(std::move(candidate));
      continue;
    }
    double ms = 0;
    Status s = time(*kernel, ms);
    if (!s) return s.withContext(std::string("timing ") + backend + " tactic " + tactic.name);
    candidate.medianMs = ms;
    logVerbose("  layer '" + step.name + "': tactic " + tactic.name + " " + std::to_string(ms) +
               " ms");
    if (ms < best) {
      best = ms;
      step.tactic = tactic.name;
      step.medianMs = ms;
      step.workspaceBytes = kernel->workspaceSize();
    }
    step.candidates.push_back(std::move(candidate));
  }
  if (step.tactic.empty()) {
    return unsupported(std::string("no ") + backend + " implementation of " +
                       layerTypeName(step.type) + " accepts this layer (" +
                       (reasons.empty() ? "none exists" : reasons) + ")");
  }
  logVerbose(std::string("layer '") + step.name + "' (" + layerTypeName(step.type) + "): chose " +
             step.tactic + " at " + std::to_string(step.medianMs) + " ms");
  timingCache_.record(cacheKey, step.tactic, step.medianMs);
  return Status::ok();
}

}  // namespace kiln
