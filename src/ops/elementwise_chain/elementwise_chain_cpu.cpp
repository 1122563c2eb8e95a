// ElementwiseChain on the CPU, one tactic: "reference", FP32 over linear tensors, each element
// through every step in turn (elementwise_chain_semantics.h, shared with the CUDA kernel).
#include "backends/cpu/tactic_checks.h"
#include "ops/elementwise_chain/elementwise_chain_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

class ElementwiseChainKernel final : public Kernel {
 public:
  ElementwiseChainKernel(const ElementwiseChainParams& p, int64_t count, int32_t nbInputs)
      : p_(p), count_(count), nbInputs_(nbInputs) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    for (int64_t i = 0; i < count_; ++i) {
      float v = x[i];
      for (int32_t s = 0; s < p_.steps; ++s) {
        const int32_t k = p_.input[s];
        const float operand = k > 0 && k < nbInputs_ ? static_cast<const float*>(in[k])[i] : 0.f;
        v = ops::elementwise_chain::applyStep(p_, s, v, operand);
      }
      y[i] = v;
    }
    return Status::ok();
  }

 private:
  ElementwiseChainParams p_;
  int64_t count_;
  int32_t nbInputs_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseChainParams* p = validate<ElementwiseChainParams>(
      c, "elementwise_chain", -1, &ops::ElementwiseChain::infer, whyNot);
  if (!p || !allLinear(c, "elementwise_chain", whyNot)) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, std::string("elementwise_chain: the CPU backend supports fp32, got ") +
                          dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  return std::make_unique<ElementwiseChainKernel>(*p, volume(c.inputs[0].dims),
                                                  static_cast<int32_t>(c.inputs.size()));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::ElementwiseChain::cpuTactics() { return cpu::kTactics; }
