// Activations on the CPU, fp32. One tactic: "reference", a loop the compiler can vectorise for
// the simple types. NaN passes through every activation (relu(NaN) is NaN, as in numpy).
#include <cmath>

#include "backends/cpu/light_kernel_util.h"

namespace kiln::cpu {
namespace {

template <ActivationType kType>
inline float activate(float x, float alpha, float beta) {
  if constexpr (kType == ActivationType::kRELU) {
    return x < 0.f ? 0.f : x;
  } else if constexpr (kType == ActivationType::kLEAKY_RELU) {
    return x < 0.f ? alpha * x : x;
  } else if constexpr (kType == ActivationType::kSIGMOID) {
    // exp(-x) overflows to inf for very negative x, which correctly gives 0.
    return 1.f / (1.f + std::exp(-x));
  } else if constexpr (kType == ActivationType::kTANH) {
    return std::tanh(x);
  } else if constexpr (kType == ActivationType::kCLIP) {
    const float lo = x < alpha ? alpha : x;
    return beta < lo ? beta : lo;
  } else {
    const float r = x + 3.f;
    const float c = r < 0.f ? 0.f : (r > 6.f ? 6.f : r);
    return x * c / 6.f;
  }
}

using ActivationLoop = void (*)(const float* in, float* out, int64_t n, float alpha, float beta);

template <ActivationType kType>
void activationLoop(const float* in, float* out, int64_t n, float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) out[i] = activate<kType>(in[i], alpha, beta);
}

ActivationLoop loopFor(ActivationType t) {
  switch (t) {
    case ActivationType::kRELU:
      return &activationLoop<ActivationType::kRELU>;
    case ActivationType::kLEAKY_RELU:
      return &activationLoop<ActivationType::kLEAKY_RELU>;
    case ActivationType::kSIGMOID:
      return &activationLoop<ActivationType::kSIGMOID>;
    case ActivationType::kTANH:
      return &activationLoop<ActivationType::kTANH>;
    case ActivationType::kCLIP:
      return &activationLoop<ActivationType::kCLIP>;
    case ActivationType::kHARD_SWISH:
      return &activationLoop<ActivationType::kHARD_SWISH>;
  }
  return nullptr;
}

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(ActivationLoop loop, int64_t n, float alpha, float beta)
      : loop_(loop), n_(n), alpha_(alpha), beta_(beta) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    loop_(static_cast<const float*>(in[0]), static_cast<float*>(out[0]), n_, alpha_, beta_);
    return Status::ok();
  }

 private:
  ActivationLoop loop_;
  int64_t n_;
  float alpha_, beta_;
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p =
      light::validate<ActivationParams>(c, "activation", 1, &inferActivation, whyNot);
  if (!p || !light::allLinear(c, "activation", whyNot)) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT) {
    light::setWhyNot(whyNot, std::string("activation: the CPU backend supports fp32, got ") +
                                 dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  const ActivationLoop loop = loopFor(p->type);
  if (!loop) {  // inference rejects unknown types; kept so a new enum value cannot crash here
    light::setWhyNot(whyNot, "activation: unknown activation type");
    return nullptr;
  }
  return std::make_unique<ActivationKernel>(loop, volume(c.inputs[0].dims), p->alpha, p->beta);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

std::span<const Tactic> activationTactics() { return kTactics; }

}  // namespace kiln::cpu
