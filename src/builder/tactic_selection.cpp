// Tactic selection for built-in steps, on whichever backend the plan targets: a timing-cache hit
// for a tactic that still accepts the configuration wins outright; otherwise every tactic is
// asked in order, each rejection is kept with its reason (verbose log, `kiln inspect`), the
// accepted ones are timed on real buffers on the device (weights are the real weights; median
// after warm-up), and the fastest is chosen and cached. Only candidates that can win are timed in
// full: a lone candidate runs once, one whose first run is far behind the best stops there, and
// the reference is timed only where nothing else applies (BuilderConfig's timing fields).
#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "builder/build_session.h"
#include "core/aligned_buffer.h"
#include "core/random_fill.h"

namespace kiln {

Status resolveBuildTarget(const std::string& target, BuildTarget& out) {
  out = BuildTarget();
  KILN_RETURN_IF_ERROR(backendForBuildTarget(target, out.backend));
  return out.backend->resolveBuildTarget(target, out.deviceIndex, out.planTarget);
}

Status BuildSession::timer(Timer*& out) {
  if (!timer_) KILN_RETURN_IF_ERROR(target_.backend->createTimer(timer_));
  out = timer_.get();
  return Status::ok();
}

bool BuildSession::accepts(const KernelConfig& config) const {
  for (const Tactic& tactic : target_.backend->tactics(config.type)) {
    std::string why;
    if (tactic.create(config, &why)) return true;
  }
  return false;
}

Status BuildSession::timingBuffer(const PluginTensorDesc& d, const void* constant,
                                  std::unique_ptr<IDeviceBuffer>& out) {
  const size_t bytes = static_cast<size_t>(plan::tensorBytes(d.dims, d.type));
  KILN_RETURN_IF_ERROR(target_.backend->allocate(bytes, "a timing buffer", out));
  if (constant) return target_.backend->copyFromHost(out->data(), constant, bytes);
  AlignedBuffer host(bytes);
  // Integer inputs of built-in layers and plugins are mostly indices (gather, RoiAlign batch
  // indices): zeros are valid for any index range, and the timing does not depend on their values.
  if (isFloatType(d.type)) {
    fillRandom(host.data(), d.type, volume(d.dims), rng_);
  } else if (bytes) {
    std::fill(host.data(), host.data() + bytes, uint8_t{0});
  }
  return target_.backend->copyFromHost(out->data(), host.data(), bytes);
}

KernelConfig BuildSession::kernelConfig(const BuildStep& step) const {
  const DeviceKind device = target_.device();
  KernelConfig config;
  config.type = step.type;
  config.params = step.params;
  for (int32_t i : step.inputs) {
    const BuildTensor& t = tensors_[i];
    config.inputs.push_back({t.dims, t.type, t.format, device});
    config.constantInputs.push_back(t.constant ? t.constant->data() : nullptr);
  }
  for (int32_t o : step.outputs) {
    const BuildTensor& t = tensors_[o];
    config.outputs.push_back({t.dims, t.type, t.format, device});
  }
  return config;
}

Status BuildSession::chooseTactic(BuildStep& step, size_t index) {
  const KernelConfig config = kernelConfig(step);
  std::string memoKey;
  if (stepMemo_) {
    memoKey = memoKeyOf(index, config);
    if (auto it = stepMemo_->find(memoKey); !memoKey.empty() && it != stepMemo_->end()) {
      step.tactic = it->second.tactic;
      step.medianMs = it->second.medianMs;
      step.workspaceBytes = it->second.workspaceBytes;
      step.candidates = it->second.candidates;
      return Status::ok();
    }
  }
  std::vector<std::pair<std::string, KernelConfig>> corners;
  for (const auto& [name, session] : corners_)
    corners.emplace_back(name, session->kernelConfig(session->steps_[index]));
  // A cached choice needs no timing buffers: at batch 64 their random fill took over a second a
  // layer (ResNet-50 on the H100), which was most of a warm-cache build.
  if (!chooseFromCache(step, config, corners))
    KILN_RETURN_IF_ERROR(timeOnBuffers(step, config, corners));
  if (!memoKey.empty())
    (*stepMemo_)[memoKey] = {step.tactic, step.medianMs, step.workspaceBytes, step.candidates};
  return Status::ok();
}

Status BuildSession::timeOnBuffers(
    BuildStep& step, const KernelConfig& config,
    const std::vector<std::pair<std::string, KernelConfig>>& corners) {
  std::vector<std::unique_ptr<IDeviceBuffer>> buffers;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    buffers.emplace_back();
    KILN_RETURN_IF_ERROR(timingBuffer(config.inputs[i], config.constantInputs[i], buffers.back()));
    ins.push_back(buffers.back()->data());
  }
  for (const PluginTensorDesc& d : config.outputs) {
    buffers.emplace_back();
    KILN_RETURN_IF_ERROR(target_.backend->allocate(
        static_cast<size_t>(plan::tensorBytes(d.dims, d.type)), "a timing output", buffers.back()));
    outs.push_back(buffers.back()->data());
  }
  return chooseFastest(step, config, corners, ins, outs);
}

std::string BuildSession::memoKeyOf(size_t index, const KernelConfig& config) const {
  // The layer's name as well as its configuration: a tactic may accept a layer for its constants'
  // values, which the configuration's key does not hold, so a choice is reused for its own layer
  // only. A profile build's choice was also accepted at the corners: their configurations too.
  std::string key = TimingCache::key(*target_.backend, config);
  if (key.empty()) return key;
  for (const auto& [name, session] : corners_) {
    const std::string corner =
        TimingCache::key(*target_.backend, session->kernelConfig(session->steps_[index]));
    if (corner.empty()) return corner;
    key += "|" + name + ":" + corner;
  }
  return steps_[index].name + "|" + key;
}

void BuildSession::recordChoices(StepMemo& memo) const {
  for (size_t index = 0; index < steps_.size(); ++index) {
    const BuildStep& step = steps_[index];
    if (step.type == LayerType::kPLUGIN || step.tactic.empty()) continue;
    const std::string key = memoKeyOf(index, kernelConfig(step));
    if (!key.empty())
      memo[key] = {step.tactic, step.medianMs, step.workspaceBytes, step.candidates};
  }
}

double BuildSession::timedMs() const {
  double sum = 0;
  for (const BuildStep& step : steps_) sum += step.medianMs;
  return sum;
}

std::string declineAtCorners(const Tactic& tactic,
                             const std::vector<std::pair<std::string, KernelConfig>>& corners,
                             size_t limit, uint64_t& workspace) {
  for (const auto& [name, config] : corners) {
    std::string why;
    auto kernel = tactic.create(config, &why);
    if (kernel && kernel->workspaceSize() > limit)
      why = "needs " + std::to_string(kernel->workspaceSize()) + " workspace bytes";
    if (!kernel || !why.empty())
      return "declines at the profile's " + name +
             (config.inputs.empty() ? ""
                                    : " (input " + dimsStringTimes(config.inputs[0].dims) + ")") +
             ": " + (why.empty() ? "declined" : why);
    workspace = std::max<uint64_t>(workspace, kernel->workspaceSize());
  }
  return "";
}

bool BuildSession::chooseFromCache(
    BuildStep& step, const KernelConfig& config,
    const std::vector<std::pair<std::string, KernelConfig>>& corners) {
  if (config_.timingCachePath.empty()) return false;
  const std::span<const Tactic> tactics = target_.backend->tactics(step.type);
  const std::string cacheKey = TimingCache::key(*target_.backend, config);
  std::string cachedTactic;
  double cachedMs = 0;
  if (cacheKey.empty() || !timingCache_.find(cacheKey, cachedTactic, cachedMs)) return false;
  for (const Tactic& tactic : tactics) {
    if (cachedTactic != tactic.name) continue;
    std::string why;
    auto kernel = tactic.create(config, &why);
    uint64_t cornerWorkspace = 0;
    if (kernel && kernel->workspaceSize() <= config_.maxWorkspaceBytes &&
        declineAtCorners(tactic, corners, config_.maxWorkspaceBytes, cornerWorkspace).empty()) {
      step.tactic = tactic.name;
      step.medianMs = cachedMs;
      step.workspaceBytes = std::max<uint64_t>(kernel->workspaceSize(), cornerWorkspace);
      step.candidates.push_back({tactic.name, cachedMs, ""});
      logVerbose(std::string("layer '") + step.name + "' (" + layerTypeName(step.type) +
                 "): chose " + step.tactic + " at " + std::to_string(cachedMs) +
                 " ms (from the timing cache)");
      return true;
    }
  }
  return false;
}

Status BuildSession::chooseFastest(BuildStep& step, const KernelConfig& config,
                                   const std::vector<std::pair<std::string, KernelConfig>>& corners,
                                   const std::vector<const void*>& ins,
                                   const std::vector<void*>& outs) {
  const Backend& backend = *target_.backend;
  const std::span<const Tactic> tactics = backend.tactics(step.type);
  // Every tactic is asked; the ones that accept are the candidates.
  struct Accepted {
    const Tactic* tactic;
    KernelPtr kernel;
    uint64_t cornerWorkspace;
  };
  std::vector<Accepted> accepted;
  std::string reasons;
  auto reject = [&](const Tactic& tactic, std::string why) {
    plan::Candidate candidate;
    candidate.name = tactic.name;
    candidate.rejectedBecause = why.empty() ? "declined" : std::move(why);
    logVerbose("  layer '" + step.name + "': tactic " + tactic.name +
               " rejected: " + candidate.rejectedBecause);
    reasons +=
        std::string(reasons.empty() ? "" : "; ") + tactic.name + ": " + candidate.rejectedBecause;
    step.candidates.push_back(std::move(candidate));
  };
  for (const Tactic& tactic : tactics) {
    std::string why;
    auto kernel = tactic.create(config, &why);
    if (kernel && kernel->workspaceSize() > config_.maxWorkspaceBytes) {
      why = "needs " + std::to_string(kernel->workspaceSize()) +
            " workspace bytes, more than the builder's limit";
      kernel.reset();
    }
    if (!kernel) {
      reject(tactic, why);
      continue;
    }
    uint64_t cornerWorkspace = 0;
    if (std::string cornerWhy =
            declineAtCorners(tactic, corners, config_.maxWorkspaceBytes, cornerWorkspace);
        !cornerWhy.empty()) {
      reject(tactic, cornerWhy);
      continue;
    }
    // The reference (last by convention) is the correctness oracle of the tests, and on the CPU
    // often 100x the fast tactics' time: it is timed only where nothing else applies.
    if (std::string_view(tactic.name) == "reference" && !accepted.empty()) {
      plan::Candidate candidate;
      candidate.name = tactic.name;
      candidate.rejectedBecause = std::string("not timed: ") + accepted.front().tactic->name +
                                  " applies (the reference is timed only where nothing else does)";
      logVerbose("  layer '" + step.name + "': tactic reference " + candidate.rejectedBecause);
      step.candidates.push_back(std::move(candidate));
      continue;
    }
    accepted.push_back({&tactic, std::move(kernel), cornerWorkspace});
  }

  Timer* clock = nullptr;
  if (!accepted.empty()) KILN_RETURN_IF_ERROR(timer(clock));
  double best = std::numeric_limits<double>::infinity();
  for (Accepted& a : accepted) {
    const Tactic& tactic = *a.tactic;
    Kernel& kernel = *a.kernel;
    plan::Candidate candidate;
    candidate.name = tactic.name;
    if (kernel.usesLibraries()) KILN_RETURN_IF_ERROR(clock->prepareLibraries());
    std::unique_ptr<IDeviceBuffer> workspace;
    KILN_RETURN_IF_ERROR(backend.allocate(kernel.workspaceSize(), "a timing workspace", workspace));
    auto run = [&] {
      return kernel.run(ins.data(), outs.data(), workspace->data(), clock->context());
    };
    // One run after the warm-up first: alone, it decides a layer with one candidate (there is
    // nothing to choose, and one run proves the kernel runs) and drops a candidate far behind.
    double first = 0, ms = 0;
    Status s = clock->median(config_.warmupRuns, 1, run, first);
    ++candidatesTimed_;
    std::string note;
    if (s && accepted.size() == 1) {
      ms = first;
      note = " (the only candidate: timed once)";
    } else if (s && first > kDropFactor * best) {
      candidate.medianMs = first;
      candidate.rejectedBecause = "dropped after one run at " + std::to_string(first) +
                                  " ms, over " + std::to_string(static_cast<int>(kDropFactor)) +
                                  "x the best so far (" + std::to_string(best) + " ms)";
      logVerbose("  layer '" + step.name + "': tactic " + tactic.name + " " +
                 candidate.rejectedBecause);
      step.candidates.push_back(std::move(candidate));
      continue;
    } else if (s) {
      s = clock->median(0, config_.timingRuns, run, ms);
    }
    if (!s)
      return s.withContext(std::string("timing ") + backend.name() + " tactic " + tactic.name);
    candidate.medianMs = ms;
    logVerbose("  layer '" + step.name + "': tactic " + tactic.name + " " + std::to_string(ms) +
               " ms" + note);
    if (ms < best) {
      best = ms;
      step.tactic = tactic.name;
      step.medianMs = ms;
      step.workspaceBytes = std::max<uint64_t>(kernel.workspaceSize(), a.cornerWorkspace);
    }
    step.candidates.push_back(std::move(candidate));
  }
  if (step.tactic.empty()) {
    return unsupported(std::string("no ") + backend.name() + " implementation of " +
                       layerTypeName(step.type) + " accepts this layer (" +
                       (reasons.empty() ? "none exists" : reasons) + ")");
  }
  logVerbose(std::string("layer '") + step.name + "' (" + layerTypeName(step.type) + "): chose " +
             step.tactic + " at " + std::to_string(step.medianMs) + " ms");
  if (!config_.timingCachePath.empty())
    timingCache_.record(TimingCache::key(backend, config), step.tactic, step.medianMs);
  return Status::ok();
}

Status BuildSession::chooseTactics(double abandonAboveMs) {
  PhaseScope phase(TracePhase::kBuild);
  abandoned_ = false;
  if (!config_.timingCachePath.empty())
    KILN_RETURN_IF_ERROR(timingCache_.load(config_.timingCachePath));
  const int32_t total = static_cast<int32_t>(steps_.size());
  int32_t done = 0;
  double sum = 0;
  for (size_t index = 0; index < steps_.size(); ++index) {
    BuildStep& step = steps_[index];
    if (step.type != LayerType::kPLUGIN) {
      Status s = chooseTactic(step, index);
      if (!s) return s.withContext("layer '" + step.name + "' (" + layerTypeName(step.type) + ")");
    }
    sum += step.medianMs;
    KILN_RETURN_IF_ERROR(reportProgress(abandonAboveMs < std::numeric_limits<double>::infinity()
                                            ? "format alternatives"
                                            : "tactics",
                                        ++done, total, step.name));
    if (sum > abandonAboveMs) {
      abandoned_ = true;
      break;
    }
  }
  if (!config_.timingCachePath.empty()) return timingCache_.save(config_.timingCachePath);
  return Status::ok();
}

}  // namespace kiln
