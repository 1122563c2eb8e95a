// kiln's own CUDA convolution: one output element per index, looping over the reduction with FP32
// accumulation, for FP32/FP16/BF16 in linear or channels-last. Obviously right rather than fast:
// it is the reference the cuDNN tactic is checked against, and runs on the host under
// RunContext::emulate. Its index rule is the CPU's (convolution_semantics.h).
#include "backends/cuda/conv_reference_kernel.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/rank4_index.cuh"
#include "ops/convolution/convolution_cuda.h"
#include "ops/convolution/convolution_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct ConvOp {
  const T* x;
  const T* w;
  const T* bias;
  T* y;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t n, k, oh, ow;
    decode4(i, g.k, g.oh, g.ow, g.channelsLast, &n, &k, &oh, &ow);
    const int64_t c0 = ops::convolution::groupFirstChannel(k, g.kg, g.cg);
    float sum = bias ? toFloat(bias[k]) : 0.f;
    for (int64_t c = 0; c < g.cg; ++c) {
      const T* wk = w + (k * g.cg + c) * g.kh * g.kw;
      for (int64_t r = 0; r < g.kh; ++r) {
        const int64_t ih = ops::convolution::inputIndex(oh, r, g.sh, g.padTop, g.dh);
        if (KILN_CONVOLUTION_IS_PADDING(ih, g.h)) continue;
        for (int64_t q = 0; q < g.kw; ++q) {
          const int64_t iw = ops::convolution::inputIndex(ow, q, g.sw, g.padLeft, g.dw);
          if (KILN_CONVOLUTION_IS_PADDING(iw, g.w)) continue;
          sum += toFloat(x[offset4(n, c0 + c, ih, iw, g.c, g.h, g.w, g.channelsLast)]) *
                 toFloat(wk[r * g.kw + q]);
        }
      }
    }
    y[i] = fromFloat<T>(sum);
  }
};

}  // namespace

std::unique_ptr<Kernel> createConvolutionReference(const KernelConfig& c, std::string* whyNot) {
  return createConvReference<ConvolutionParams, ConvOp>(c, "dense_conv_ref", whyNot);
}

}  // namespace kiln::cuda
