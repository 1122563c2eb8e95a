// Local response normalization across channels (ONNX LRN) on CUDA. One tactic, "reference": one
// per-element function per output element (emulatable on the host), linear or channels-last.
//
// Value rules: lrn_semantics.h, the CPU's (lrn_cpu.cpp), evaluated in fp32 here: the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels,
// y = x / pow(bias + alpha / size * sum(x^2), beta).
#include <cstdint>

#include "backends/config_checks.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/lrn/lrn_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::lrn {
namespace {

template <class T>
struct LrnElement {
  const T* x;
  T* y;
  ChannelView v;
  int64_t before, after;
  float alphaOverSize, bias, beta;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t s = i % v.S, c = (i / v.S) % v.C, n = i / (v.S * v.C);
    const float sum = ops::lrn::windowSumOfSquares<float>(
        ops::lrn::window(c, before, after, v.C),
        [&](int64_t j) { return toFloat(x[v.at(n, j, s, v.inLast)]); });
    const float denom = ops::lrn::denominator(sum, alphaOverSize, bias, beta);
    y[v.at(n, c, s, v.outLast)] = fromFloat<T>(toFloat(x[v.at(n, c, s, v.inLast)]) / denom);
  }
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const LRNParams* p =
      config_checks::validate<LRNParams>(c, DeviceKind::kCUDA, "lrn", 1, &ops::LRN::infer, whyNot);
  if (!p) return nullptr;
  const ChannelView v = channelView(c.inputs[0], c.outputs[0]);
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
      [v, params = *p](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        LrnElement<T> f{static_cast<const T*>(in[0]),
                        static_cast<T*>(out[0]),
                        v,
                        ops::lrn::channelsBefore(params.size),
                        ops::lrn::channelsAfter(params.size),
                        static_cast<float>(ops::lrn::alphaOverSize(params.alpha, params.size)),
                        params.bias,
                        params.beta};
        return launchElements(f, v.N * v.C * v.S, ctx, "lrn_reference");
      });
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::lrn

std::span<const kiln::Tactic> kiln::ops::LRN::cudaTactics() { return cuda::lrn::kTactics; }
