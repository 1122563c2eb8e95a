// kiln's own CUDA convolution: one output element per index, looping over the reduction with FP32
// accumulation, then the fused epilogue (residual, activation), for FP32/FP16/BF16 in linear or
// channels-last (weights in either). Obviously right rather than fast:
// it is the reference the cuDNN tactic is checked against, and runs on the host under
// RunContext::emulate. Its index rule is the CPU's (convolution_semantics.h).
#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/rank4_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/convolution/convolution_cuda.h"
#include "ops/convolution/convolution_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct ConvOp {
  const T* x;
  const T* w;
  const T* bias;
  const T* residual;  // of y's shape and format, or nullptr
  T* y;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t n, k, oh, ow;
    decode4(i, g.k, g.oh, g.ow, g.channelsLast, &n, &k, &oh, &ow);
    const int64_t c0 = ops::convolution::groupFirstChannel(k, g.kg, g.cg);
    float sum = bias ? toFloat(bias[k]) : 0.f;
    for (int64_t c = 0; c < g.cg; ++c) {
      for (int64_t r = 0; r < g.kh; ++r) {
        const int64_t ih = ops::convolution::inputIndex(oh, r, g.sh, g.padTop, g.dh);
        if (KILN_CONVOLUTION_IS_PADDING(ih, g.h)) continue;
        for (int64_t q = 0; q < g.kw; ++q) {
          const int64_t iw = ops::convolution::inputIndex(ow, q, g.sw, g.padLeft, g.dw);
          if (KILN_CONVOLUTION_IS_PADDING(iw, g.w)) continue;
          sum += toFloat(x[offset4(n, c0 + c, ih, iw, g.c, g.h, g.w, g.channelsLast)]) *
                 toFloat(w[offset4(k, c, r, q, g.cg, g.kh, g.kw, g.weightsChannelsLast)]);
        }
      }
    }
    y[i] = fromFloat<T>(ops::convolution::epilogue(g, sum, residual ? toFloat(residual[i]) : 0.f));
  }
};

}  // namespace

std::unique_ptr<Kernel> createConvolutionReference(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  if (!readConvGeometry<ConvolutionParams>(c, "reference", &g, whyNot, true)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const T* bias = g.hasBias ? static_cast<const T*>(in[2]) : nullptr;
        const T* residual = g.residual >= 0 ? static_cast<const T*>(in[g.residual]) : nullptr;
        return launchElements(ConvOp<T>{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                        bias, residual, static_cast<T*>(out[0]), g},
                              g.n * g.k * g.oh * g.ow, ctx, "dense_conv_ref");
      });
}

}  // namespace kiln::cuda
