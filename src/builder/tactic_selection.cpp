// Tactic selection for built-in steps: every tactic of the layer type is asked in order; those
// that accept the configuration are timed on real buffers (weights are the real weights), the
// fastest wins, and each rejection is kept with its reason for the verbose log and `kiln inspect`.
#include <algorithm>
#include <limits>

#include "backends/cpu/kernel.h"
#include "builder/build_session.h"
#include "builder/tactic_choice.h"
#include "builder/timing.h"
#include "core/aligned_buffer.h"
#include "core/random_fill.h"

namespace kiln {

Status BuildSession::chooseTactic(BuildStep& step) {
  cpu::KernelConfig config;
  config.type = step.type;
  config.params = step.params;
  for (int32_t i : step.inputs) {
    const BuildTensor& t = tensors_[i];
    config.inputs.push_back({t.dims, t.type, t.format, DeviceKind::kCPU});
    config.constantInputs.push_back(t.constant ? t.constant->data() : nullptr);
  }
  for (int32_t o : step.outputs) {
    const BuildTensor& t = tensors_[o];
    config.outputs.push_back({t.dims, t.type, t.format, DeviceKind::kCPU});
  }

  std::vector<AlignedBuffer> inBuffers, outBuffers;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  for (size_t i = 0; i < config.inputs.size(); ++i) {
    if (config.constantInputs[i]) {
      ins.push_back(config.constantInputs[i]);
      continue;
    }
    const PluginTensorDesc& d = config.inputs[i];
    inBuffers.emplace_back(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)));
    // Integer inputs of built-in layers are mostly indices (gather, RoiAlign batch indices):
    // zeros are valid for any index range, and the timing does not depend on their values.
    if (isFloatType(d.type)) {
      fillRandom(inBuffers.back().data(), d.type, volume(d.dims), rng_);
    } else if (inBuffers.back().size()) {
      std::fill(inBuffers.back().data(), inBuffers.back().data() + inBuffers.back().size(),
                uint8_t{0});
    }
    ins.push_back(inBuffers.back().data());
  }
  for (const PluginTensorDesc& d : config.outputs) {
    outBuffers.emplace_back(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)));
    outs.push_back(outBuffers.back().data());
  }

  return chooseFastest(
      step, config, cpu::tacticsFor(step.type), "CPU", [&](const cpu::Kernel& kernel, double& ms) {
        AlignedBuffer workspace(kernel.workspaceSize());
        return medianMilliseconds(
            config_.warmupRuns, config_.timingRuns,
            [&] { return kernel.run(ins.data(), outs.data(), workspace.data()); }, ms);
      });
}

Status BuildSession::chooseTactics() {
  PhaseScope phase(TracePhase::kBuild);
  if (!config_.timingCachePath.empty())
    KILN_RETURN_IF_ERROR(timingCache_.load(config_.timingCachePath));
  for (BuildStep& step : steps_) {
    if (step.type == LayerType::kPLUGIN) continue;
    Status s = target_.device == DeviceKind::kCUDA ? chooseCudaTactic(step) : chooseTactic(step);
    if (!s) return s.withContext("layer '" + step.name + "' (" + layerTypeName(step.type) + ")");
  }
  if (!config_.timingCachePath.empty()) return timingCache_.save(config_.timingCachePath);
  return Status::ok();
}

}  // namespace kiln
