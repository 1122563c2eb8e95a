// CPU instance normalisation (ONNX InstanceNormalization) and local response normalisation
// (ONNX LRN). Statistics are accumulated in double so that large spatial extents keep their
// precision. fp32 linear.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/light_kernel_util.h"
#include "core/shape_inference.h"

namespace kiln::cpu {
namespace {

bool allFloat(const KernelConfig& c, const char* layer, std::string* whyNot) {
  for (const auto* v : {&c.inputs, &c.outputs})
    for (const auto& d : *v)
      if (d.type != DataType::kFLOAT) {
        light::setWhyNot(whyNot, std::string(layer) + ": the CPU kernel computes in fp32 only");
        return false;
      }
  return true;
}

// [N, C, rest...] as (batch, channels, spatial elements per channel).
struct ChannelLayout {
  int64_t batch = 0, channels = 0, spatial = 1;
  explicit ChannelLayout(const Dims& d) : batch(d.d[0]), channels(d.d[1]) {
    for (int32_t i = 2; i < d.nbDims; ++i) spatial *= d.d[i];
  }
};

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
        // Two passes: the mean first, then the centred squares (no cancellation).
        double mean = 0.0;
        for (int64_t i = 0; i < s; ++i) mean += x[base + i];
        mean /= static_cast<double>(s);
        double var = 0.0;
        for (int64_t i = 0; i < s; ++i) {
          const double d = x[base + i] - mean;
          var += d * d;
        }
        var /= static_cast<double>(s);
        const double k = scale[c] / std::sqrt(var + epsilon_);
        for (int64_t i = 0; i < s; ++i)
          y[base + i] = static_cast<float>((x[base + i] - mean) * k + bias[c]);
      }
    }
    return Status::ok();
  }

 private:
  ChannelLayout shape_;
  double epsilon_;
};

std::unique_ptr<Kernel> createInstanceNorm(const KernelConfig& c, std::string* whyNot) {
  const NormalizationParams* p =
      light::validate<NormalizationParams>(c, "normalization", 3, &inferNormalization, whyNot);
  if (!p || !light::allLinear(c, "normalization", whyNot) || !allFloat(c, "normalization", whyNot))
    return nullptr;
  return std::make_unique<InstanceNormReference>(c.inputs[0].dims, p->epsilon);
}

class LrnReference final : public Kernel {
 public:
  LrnReference(const Dims& d, const LrnParams& p) : shape_(d), p_(p) {}

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
  LrnParams p_;
};

std::unique_ptr<Kernel> createLrn(const KernelConfig& c, std::string* whyNot) {
  const LrnParams* p = light::validate<LrnParams>(c, "lrn", 1, &inferLrn, whyNot);
  if (!p || !light::allLinear(c, "lrn", whyNot) || !allFloat(c, "lrn", whyNot)) return nullptr;
  return std::make_unique<LrnReference>(c.inputs[0].dims, *p);
}

constexpr Tactic kNormalizationTactics[] = {{"reference", &createInstanceNorm}};
constexpr Tactic kLrnTactics[] = {{"reference", &createLrn}};

}  // namespace

std::span<const Tactic> normalizationTactics() { return kNormalizationTactics; }
std::span<const Tactic> lrnTactics() { return kLrnTactics; }

}  // namespace kiln::cpu
