// Activations on the CPU. One tactic: "reference", a loop the compiler can vectorise for the
// simple types. fp32 for every type; neg and abs also on int32/int64 (two's complement wrap:
// neg(MIN) and abs(MIN) are MIN, as in numpy); not on bool (any non-zero byte counts as true and
// the result is 0 or 1). NaN passes through every fp32 activation (relu(NaN) is NaN, as in numpy).
#include <cmath>
#include <type_traits>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

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
  } else if constexpr (kType == ActivationType::kHARD_SWISH) {
    const float r = x + 3.f;
    const float c = r < 0.f ? 0.f : (r > 6.f ? 6.f : r);
    return x * c / 6.f;
  } else if constexpr (kType == ActivationType::kELU) {
    return x < 0.f ? alpha * std::expm1(x) : x;
  } else if constexpr (kType == ActivationType::kSELU) {
    return beta * (x <= 0.f ? alpha * std::expm1(x) : x);
  } else if constexpr (kType == ActivationType::kSOFTPLUS) {
    // log(1 + exp(x)) overflows for large x; max(x, 0) + log1p(exp(-|x|)) is the same value.
    return (x > 0.f ? x : 0.f) + std::log1p(std::exp(-std::fabs(x)));
  } else if constexpr (kType == ActivationType::kHARD_SIGMOID) {
    const float v = alpha * x + beta;
    return v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
  } else if constexpr (kType == ActivationType::kEXP) {
    return std::exp(x);
  } else if constexpr (kType == ActivationType::kLOG) {
    return std::log(x);
  } else if constexpr (kType == ActivationType::kSQRT) {
    return std::sqrt(x);
  } else if constexpr (kType == ActivationType::kNEG) {
    return -x;
  } else if constexpr (kType == ActivationType::kABS) {
    return std::fabs(x);
  } else if constexpr (kType == ActivationType::kRECIPROCAL) {
    return 1.f / x;
  } else {
    static_assert(kType == ActivationType::kERF);
    return std::erf(x);
  }
}

using ActivationLoop = void (*)(const void* in, void* out, int64_t n, float alpha, float beta);

template <ActivationType kType>
void activationLoop(const void* in, void* out, int64_t n, float alpha, float beta) {
  const float* x = static_cast<const float*>(in);
  float* y = static_cast<float*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = activate<kType>(x[i], alpha, beta);
}

template <class T, bool kAbs>
void integerLoop(const void* in, void* out, int64_t n, float, float) {
  using U = std::make_unsigned_t<T>;
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) {
    // Negation through the unsigned type wraps instead of overflowing.
    const T neg = static_cast<T>(U{0} - static_cast<U>(x[i]));
    y[i] = kAbs ? (x[i] < 0 ? neg : x[i]) : neg;
  }
}

void notLoop(const void* in, void* out, int64_t n, float, float) {
  const uint8_t* x = static_cast<const uint8_t*>(in);
  uint8_t* y = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] == 0 ? 1 : 0;
}

ActivationLoop floatLoopFor(ActivationType t) {
  switch (t) {
#define KILN_ACTIVATION_CASE(name) \
  case ActivationType::name:       \
    return &activationLoop<ActivationType::name>;
    KILN_ACTIVATION_CASE(kRELU)
    KILN_ACTIVATION_CASE(kLEAKY_RELU)
    KILN_ACTIVATION_CASE(kSIGMOID)
    KILN_ACTIVATION_CASE(kTANH)
    KILN_ACTIVATION_CASE(kCLIP)
    KILN_ACTIVATION_CASE(kHARD_SWISH)
    KILN_ACTIVATION_CASE(kELU)
    KILN_ACTIVATION_CASE(kSELU)
    KILN_ACTIVATION_CASE(kSOFTPLUS)
    KILN_ACTIVATION_CASE(kHARD_SIGMOID)
    KILN_ACTIVATION_CASE(kEXP)
    KILN_ACTIVATION_CASE(kLOG)
    KILN_ACTIVATION_CASE(kSQRT)
    KILN_ACTIVATION_CASE(kNEG)
    KILN_ACTIVATION_CASE(kABS)
    KILN_ACTIVATION_CASE(kRECIPROCAL)
    KILN_ACTIVATION_CASE(kERF)
#undef KILN_ACTIVATION_CASE
    case ActivationType::kNOT:
      break;
  }
  return nullptr;
}

// The loop for a type and element type, or nullptr when the CPU backend has none.
ActivationLoop loopFor(ActivationType t, DataType type) {
  switch (type) {
    case DataType::kFLOAT:
      return floatLoopFor(t);
    case DataType::kINT32:
      if (t == ActivationType::kNEG) return &integerLoop<int32_t, false>;
      if (t == ActivationType::kABS) return &integerLoop<int32_t, true>;
      return nullptr;
    case DataType::kINT64:
      if (t == ActivationType::kNEG) return &integerLoop<int64_t, false>;
      if (t == ActivationType::kABS) return &integerLoop<int64_t, true>;
      return nullptr;
    case DataType::kBOOL:
      return t == ActivationType::kNOT ? &notLoop : nullptr;
    default:
      return nullptr;
  }
}

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(ActivationLoop loop, int64_t n, float alpha, float beta)
      : loop_(loop), n_(n), alpha_(alpha), beta_(beta) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    loop_(in[0], out[0], n_, alpha_, beta_);
    return Status::ok();
  }

 private:
  ActivationLoop loop_;
  int64_t n_;
  float alpha_, beta_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p =
      validate<ActivationParams>(c, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p || !allLinear(c, "activation", whyNot)) return nullptr;
  const ActivationLoop loop = loopFor(p->type, c.inputs[0].type);
  if (!loop) {
    setWhyNot(whyNot,
                     std::string("activation: the CPU backend supports fp32 (int32/int64 for "
                                 "neg and abs, bool for not), got ") +
                         dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  return std::make_unique<ActivationKernel>(loop, volume(c.inputs[0].dims), p->alpha, p->beta);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Activation::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
