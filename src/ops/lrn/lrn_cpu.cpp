// CPU local response normalisation across channels (ONNX LRN): one tactic, "reference", with
// the window sums accumulated in double. fp32 linear. The window and the formula are
// lrn_semantics.h, which the CUDA kernel applies too (in float).
#include <cstdint>
#include <string>

#include "backends/cpu/tactic_checks.h"
#include "ops/lrn/lrn_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

class LrnReference final : public Kernel {
 public:
  LrnReference(const Dims& d, const LRNParams& p) : shape_(d), p_(p) {}

  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    const auto* x = static_cast<const float*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
    const int64_t s = shape_.spatial, channels = shape_.channels;
    const int64_t before = ops::lrn::channelsBefore(p_.size);
    const int64_t after = ops::lrn::channelsAfter(p_.size);
    const double alphaOverSize = ops::lrn::alphaOverSize(p_.alpha, p_.size);
    for (int64_t n = 0; n < shape_.batch; ++n) {
      const float* xn = x + n * channels * s;
      float* yn = y + n * channels * s;
      for (int64_t c = 0; c < channels; ++c) {
        const ops::lrn::Window w = ops::lrn::window(c, before, after, channels);
        for (int64_t i = 0; i < s; ++i) {
          const double sum = ops::lrn::windowSumOfSquares<double>(
              w, [xn, s, i](int64_t j) { return xn[j * s + i]; });
          const double denom = ops::lrn::denominator<double>(sum, alphaOverSize, p_.bias, p_.beta);
          yn[c * s + i] = static_cast<float>(xn[c * s + i] / denom);
        }
      }
    }
    return Status::ok();
  }

 private:
  ChannelLayout shape_;
  LRNParams p_;
};

KernelPtr createLrn(const KernelConfig& c, std::string* whyNot) {
  const LRNParams* p = validate<LRNParams>(c, "lrn", 1, &ops::LRN::infer, whyNot);
  if (!p || !allLinear(c, "lrn", whyNot) || !allFp32(c, "lrn", whyNot)) return nullptr;
  return std::make_unique<LrnReference>(c.inputs[0].dims, *p);
}

constexpr Tactic kTactics[] = {{"reference", &createLrn}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::LRN::cpuTactics() { return cpu::kTactics; }
