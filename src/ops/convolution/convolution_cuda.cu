// kiln's own CUDA convolutions, both per-element functions that run on the host under
// RunContext::emulate, with the CPU's index rule (convolution_semantics.h), FP32 accumulation and
// the fused epilogue (bias, residual, activation) for FP32/FP16/BF16:
// - the reference: one output element per index, looping over the reduction, linear or
//   channels-last (weights in either). Obviously right rather than fast: it is what the library
//   tactics are checked against.
// - depthwise_vectorized: a 3x3 depthwise convolution (groups = C = K, as MobileNet's and
//   EfficientNet's blocks) over channels-last tensors whose channel count is a multiple of the
//   16-byte vector. One index is N consecutive channels of one output pixel: each tap one 16-byte
//   load of the input, and the N channels' 9 filter taps, which lie contiguous (a depthwise
//   filter [K, 1, 3, 3] is the same bytes in either format), nine more. These layers are memory
//   bound; cuDNN's graph engines ran MobileNetV2's at about half the card's bandwidth.
#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/rank4_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "backends/cuda/vector_access.cuh"
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

// Channels-last 3x3 depthwise: vector i holds N consecutive channels (group cv) of output pixel
// (n, oh, ow); their filters are the N * 9 elements from cv * N * 9 on, read as nine vectors.
template <typename T>
struct DepthwiseVectorOp {
  static constexpr int N = kVectorElements<T>;
  static constexpr int kTaps = 9;
  const T* x;
  const T* w;
  const T* bias;
  const T* residual;  // of y's shape and format, or nullptr
  T* y;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    namespace conv = ops::convolution;
    // Vector i of the channels-last output viewed as [N, C / N, OH, OW] vectors.
    int64_t n, cv, oh, ow;
    decode4(i, g.c / N, g.oh, g.ow, true, &n, &cv, &oh, &ow);
    Vec<T, N> filter[kTaps];
#pragma unroll
    for (int v = 0; v < kTaps; ++v) filter[v] = loadVec<N>(w + (cv * kTaps + v) * N);
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = bias ? toFloat(bias[cv * N + j]) : 0.f;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const int64_t ih = conv::inputIndex(oh, r, g.sh, g.padTop, g.dh);
      if (KILN_CONVOLUTION_IS_PADDING(ih, g.h)) continue;
#pragma unroll
      for (int q = 0; q < 3; ++q) {
        const int64_t iw = conv::inputIndex(ow, q, g.sw, g.padLeft, g.dw);
        if (KILN_CONVOLUTION_IS_PADDING(iw, g.w)) continue;
        const Vec<T, N> e = loadVec<N>(x + ((n * g.h + ih) * g.w + iw) * g.c + cv * N);
#pragma unroll
        for (int j = 0; j < N; ++j) {
          // Channel j's tap (r, q) is element j * 9 + r * 3 + q of the group's filters.
          const int at = j * kTaps + r * 3 + q;
          acc[j] += toFloat(e.v[j]) * toFloat(filter[at / N].v[at % N]);
        }
      }
    }
    Vec<T, N> res{};
    if (residual) res = loadVec<N>(residual + i * N);
    Vec<T, N> out;
#pragma unroll
    for (int j = 0; j < N; ++j)
      out.v[j] = fromFloat<T>(conv::epilogue(g, acc[j], residual ? toFloat(res.v[j]) : 0.f));
    storeVec<N>(y + i * N, out);
  }
};

}  // namespace

std::unique_ptr<Kernel> createDepthwiseVectorized(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "depthwise_vectorized";
  ConvGeometry g;
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  const int64_t vector = g.type == DataType::kFLOAT ? 4 : 8;
  if (!g.channelsLast || g.groups != g.c || g.k != g.c || g.kh != 3 || g.kw != 3 ||
      g.c % vector != 0) {
    if (whyNot)
      *whyNot = std::string(kTactic) +
                ": needs a 3x3 depthwise convolution (groups = input = output channels) over "
                "channels-last tensors with a multiple of " +
                std::to_string(vector) + " channels";
    return nullptr;
  }
  return makeTypedKernel<FloatTypes>(g.type, [g](auto tag, const void* const* in, void* const* out,
                                                 const RunContext& ctx) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in[0]);
    const T* w = static_cast<const T*>(in[1]);
    const T* bias = g.hasBias ? static_cast<const T*>(in[2]) : nullptr;
    const T* residual = g.residual >= 0 ? static_cast<const T*>(in[g.residual]) : nullptr;
    T* y = static_cast<T*>(out[0]);
    const int64_t count = g.n * g.k * g.oh * g.ow;
    // A binding off the 16-byte grid takes the per-element reference.
    if (!isAligned(x) || !isAligned(w) || !isAligned(y) || (residual && !isAligned(residual)))
      return launchElements(ConvOp<T>{x, w, bias, residual, y, g}, count, ctx, "dense_conv_ref");
    return launchElements(DepthwiseVectorOp<T>{x, w, bias, residual, y, g},
                          count / kVectorElements<T>, ctx, "dense_conv_depthwise_vectorized");
  });
}

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
