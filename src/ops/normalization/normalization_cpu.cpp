// CPU instance normalisation (ONNX InstanceNormalization): one tactic, "reference". Statistics
// are accumulated in double so that large spatial extents keep their precision. fp32 linear. The
// rules (slices, two-pass statistics, the output formula) are normalization_semantics.h, which the
// CUDA kernels apply too.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/normalization/normalization_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

using ops::normalization::normalized;
using ops::normalization::sliceFactor;
using ops::normalization::sliceMoments;

class InstanceNormReference final : public Kernel {
 public:
  InstanceNormReference(const Dims& d, float epsilon) : shape_(d), epsilon_(epsilon) {}

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* x = static_cast<const float*>(inputs[0]);
    const auto* scale = static_cast<const float*>(inputs[1]);
    const auto* bias = static_cast<const float*>(inputs[2]);
    auto* y = static_cast<float*>(outputs[0]);
    const int64_t s = shape_.spatial;
    if (s == 0) return Status::ok();
    for (int64_t n = 0; n < shape_.batch; ++n) {
      for (int64_t c = 0; c < shape_.channels; ++c) {
        const int64_t base = (n * shape_.channels + c) * s;
        double mean, var;
        sliceMoments(
            s, [x, base](int64_t i) { return x[base + i]; }, mean, var);
        const double k = sliceFactor(scale[c], var, epsilon_);
        for (int64_t i = 0; i < s; ++i)
          y[base + i] = static_cast<float>(normalized(x[base + i], mean, k, bias[c]));
      }
    }
    return Status::ok();
  }

 private:
  ChannelLayout shape_;
  double epsilon_;
};

KernelPtr createInstanceNorm(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p =
      validate<NormalizationParams>(c, "normalization", 3, &ops::Normalization::infer, whyNot);
  if (!p || !allLinear(c, "normalization", whyNot) || !allFp32(c, "normalization", whyNot))
    return nullptr;
  return std::make_unique<InstanceNormReference>(c.inputs[0].dims, p->epsilon);
}

constexpr Tactic kTactics[] = {{"reference", &createInstanceNorm}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Normalization::cpuTactics() { return cpu::kTactics; }
