// ElementwiseChain on CUDA, one tactic: "reference", FP32, FP16 and BF16, every tensor in one
// format (the steps are per element, so any layout that all of them share), each element read once
// from each input, taken through every step in FP32 and rounded once on store
// (elementwise_chain_semantics.h, shared with the CPU kernel).
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/elementwise_chain/elementwise_chain_semantics.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

template <class T>
struct ElementwiseChainOp {
  const T* in[1 + kMaxElementwiseChainSteps];  // x, then the operand inputs
  T* y;
  ElementwiseChainParams p;
  __host__ __device__ void operator()(int64_t i) const {
    float v = toFloat(in[0][i]);
    for (int32_t s = 0; s < p.steps; ++s) {
      const int32_t k = p.input[s];
      const float operand = k > 0 ? toFloat(in[k][i]) : 0.f;
      v = ops::elementwise_chain::applyStep(p, s, v, operand);
    }
    y[i] = fromFloat<T>(v);
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = validate<ElementwiseChainParams>(c, "elementwise_chain", -1, false, whyNot);
  if (!p) return nullptr;
  for (const PluginTensorDesc& d : c.inputs)
    if (d.format != c.outputs[0].format) {
      setWhyNot(whyNot, "elementwise_chain: every tensor needs the output's format (" +
                            std::string(formatName(c.outputs[0].format)) + "), one is " +
                            formatName(d.format));
      return nullptr;
    }
  const ElementwiseChainParams params = *p;
  const int64_t count = volume(c.outputs[0].dims);
  const auto nbInputs = static_cast<int32_t>(c.inputs.size());
  return makeTypedKernel<FloatTypes>(
      c.outputs[0].type, [params, count, nbInputs](auto tag, const void* const* in,
                                                   void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        ElementwiseChainOp<T> op{};
        for (int32_t k = 0; k < nbInputs; ++k) op.in[k] = static_cast<const T*>(in[k]);
        op.y = static_cast<T*>(out[0]);
        op.p = params;
        return launchElements(op, count, ctx, "elementwise_chain");
      });
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::ElementwiseChain::cudaTactics() { return cuda::kTactics; }
