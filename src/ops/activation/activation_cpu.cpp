// Activations on the CPU. Two tactics: "split", the same loop over chunks of at least kChunk
// elements on the CPU thread pool (bitwise the reference's results: each element is computed the
// same way), for tensors of at least two chunks; "reference", one loop the compiler can vectorise
// for the simple types. fp32 for every type; neg and abs also on int32/int64 (two's complement
// wrap: neg(MIN) and abs(MIN) are MIN, as in numpy); not on bool (any non-zero byte counts as true
// and the result is 0 or 1). NaN passes through every fp32 activation (relu(NaN) is NaN, as in
// numpy). The formulas are activation_semantics.h, which the CUDA kernel applies too.
#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cpu/tactic_checks.h"
#include "backends/cpu/thread_pool.h"
#include "ops/activation/activation_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

using ActivationLoop = void (*)(const void* in, void* out, int64_t n, float alpha, float beta);

template <ActivationType kType>
void activationLoop(const void* in, void* out, int64_t n, float alpha, float beta) {
  const float* x = static_cast<const float*>(in);
  float* y = static_cast<float*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = ops::activation::activate<kType>(x[i], alpha, beta);
}

template <class T, bool kAbs>
void integerLoop(const void* in, void* out, int64_t n, float, float) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i)
    y[i] = kAbs ? ops::activation::wrapAbs(x[i]) : ops::activation::wrapNeg(x[i]);
}

void notLoop(const void* in, void* out, int64_t n, float, float) {
  const uint8_t* x = static_cast<const uint8_t*>(in);
  uint8_t* y = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < n; ++i) y[i] = ops::activation::logicalNot(x[i]);
}

ActivationLoop floatLoopFor(ActivationType t) {
  switch (t) {
#define KILN_ACTIVATION_CASE(kTYPE) \
  case ActivationType::kTYPE:       \
    return &activationLoop<ActivationType::kTYPE>;
    KILN_FLOAT_ACTIVATIONS(KILN_ACTIVATION_CASE)
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

// 64 KiB of fp32: big enough that handing a chunk to a thread costs little beside it.
constexpr int64_t kChunk = 16384;

class SplitActivationKernel final : public Kernel {
 public:
  SplitActivationKernel(ActivationLoop loop, int64_t n, size_t elementSize, float alpha, float beta)
      : loop_(loop), n_(n), es_(elementSize), alpha_(alpha), beta_(beta) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    const int64_t chunks = (n_ + kChunk - 1) / kChunk;
    parallelFor(chunks, cpuThreadCount(), [&](int64_t t, int) {
      const int64_t begin = t * kChunk, count = std::min(kChunk, n_ - begin);
      loop_(x + begin * es_, y + begin * es_, count, alpha_, beta_);
    });
    return Status::ok();
  }

 private:
  ActivationLoop loop_;
  int64_t n_;
  size_t es_;
  float alpha_, beta_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p =
      validate<ActivationParams>(c, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p || !allLinear(c, "activation", whyNot)) return nullptr;
  const ActivationLoop loop = loopFor(p->type, c.inputs[0].type);
  if (!loop) {
    setWhyNot(whyNot, std::string("activation: the CPU backend supports fp32 (int32/int64 for "
                                  "neg and abs, bool for not), got ") +
                          dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  return std::make_unique<ActivationKernel>(loop, volume(c.inputs[0].dims), p->alpha, p->beta);
}

KernelPtr createSplit(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p =
      validate<ActivationParams>(c, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p || !allLinear(c, "activation", whyNot)) return nullptr;
  const int64_t n = volume(c.inputs[0].dims);
  if (n < 2 * kChunk) {
    setWhyNot(whyNot, "activation: split: fewer than " + std::to_string(2 * kChunk) +
                          " elements, nothing to split");
    return nullptr;
  }
  const ActivationLoop loop = loopFor(p->type, c.inputs[0].type);
  if (!loop) return createReference(c, whyNot);  // says why
  return std::make_unique<SplitActivationKernel>(loop, n, dataTypeSize(c.inputs[0].type), p->alpha,
                                                 p->beta);
}

constexpr Tactic kTactics[] = {{"split", &createSplit}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Activation::cpuTactics() { return cpu::kTactics; }
