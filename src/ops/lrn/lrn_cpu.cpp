// CPU local response normalisation across channels (ONNX LRN): one tactic, "reference", with
// the window sums accumulated in double. fp32 linear.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "backends/cpu/tactic_checks.h"
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
    // ONNX: the window of channel c is [c - floor((size-1)/2), c + ceil((size-1)/2)].
    const int64_t before = (p_.size - 1) / 2;
    const int64_t after = p_.size / 2;
    const double alphaOverSize = static_cast<double>(p_.alpha) / p_.size;
    for (int64_t n = 0; n < shape_.batch; ++n) {
      const float* xn = x + n * channels * s;
      float* yn = y + n * channels * s;
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t lo = std::max<int64_t>(0, c - before);
        const int64_t hi = std::min<int64_t>(channels - 1, c + after);
        for (int64_t i = 0; i < s; ++i) {
          double sum = 0.0;
          for (int64_t j = lo; j <= hi; ++j) {
            const double v = xn[j * s + i];
            sum += v * v;
          }
          const double denom =
              std::pow(p_.bias + alphaOverSize * sum, static_cast<double>(p_.beta));
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

constexpr Tactic kLrnTactics[] = {{"reference", &createLrn}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> LRN::cpuTactics() { return cpu::kLrnTactics; }

}  // namespace kiln::ops
