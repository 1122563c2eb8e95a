// kiln's own CUDA deconvolution (transposed convolution) in the gather form, as the CPU reference:
// one output element per index sums, with FP32 accumulation, the inputs whose scatter window
// covers it, for FP32/FP16/BF16 in linear or channels-last. Obviously right rather than fast: it
// is the reference the cuDNN tactic is checked against, and runs on the host under
// RunContext::emulate. Its index rule is the CPU's (deconvolution_semantics.h).
#include "backends/cuda/conv_reference_kernel.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/rank4_index.cuh"
#include "ops/deconvolution/deconvolution_cuda.h"
#include "ops/deconvolution/deconvolution_semantics.h"

namespace kiln::cuda {
namespace {

template <typename T>
struct DeconvOp {
  const T* x;
  const T* w;  // [c, kg, kh, kw]
  const T* bias;
  T* y;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t n, k, oh, ow;
    decode4(i, g.k, g.oh, g.ow, g.channelsLast, &n, &k, &oh, &ow);
    const int64_t grp = k / g.kg, m = k % g.kg;
    float sum = bias ? toFloat(bias[k]) : 0.f;
    for (int64_t r = 0; r < g.kh; ++r) {
      const int64_t ih = ops::deconvolution::sourceIndex(oh, r, g.sh, g.padTop, g.dh, g.h);
      if (ih < 0) continue;
      for (int64_t q = 0; q < g.kw; ++q) {
        const int64_t iw = ops::deconvolution::sourceIndex(ow, q, g.sw, g.padLeft, g.dw, g.w);
        if (iw < 0) continue;
        for (int64_t c = 0; c < g.cg; ++c) {
          const int64_t ci = grp * g.cg + c;
          sum += toFloat(x[offset4(n, ci, ih, iw, g.c, g.h, g.w, g.channelsLast)]) *
                 toFloat(w[((ci * g.kg + m) * g.kh + r) * g.kw + q]);
        }
      }
    }
    y[i] = fromFloat<T>(sum);
  }
};

}  // namespace

std::unique_ptr<Kernel> createDeconvolutionReference(const KernelConfig& c, std::string* whyNot) {
  return createConvReference<DeconvolutionParams, DeconvOp>(c, "dense_deconv_ref", whyNot);
}

}  // namespace kiln::cuda
