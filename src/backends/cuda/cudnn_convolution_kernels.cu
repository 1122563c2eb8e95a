// kiln's own kernels around the cuDNN convolution tactic (see cudnn_convolution.h): the epilogue
// (bias, residual, activation) after the library call and the NHWC filter packing before it.
// Every float type, both formats.
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "backends/cuda/vector_access.cuh"

namespace kiln::cuda {
namespace {

template <typename T>
struct EpilogueOp {
  T* y;
  const T* bias;      // [k] or nullptr
  const T* residual;  // of y's shape and format, or nullptr
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t ch = g.channelsLast ? i % g.k : (i / (g.oh * g.ow)) % g.k;
    const float v = toFloat(y[i]) + (bias ? toFloat(bias[ch]) : 0.f);
    y[i] = fromFloat<T>(ops::convolution::epilogue(g, v, residual ? toFloat(residual[i]) : 0.f));
  }
};

// Channels-last with K a multiple of the vector width and every buffer 16-byte aligned: vector i
// is N consecutive channels of one pixel, whose bias is N consecutive values too.
template <typename T>
struct VectorEpilogueOp {
  static constexpr int N = kVectorElements<T>;
  T* y;
  const T* bias;
  const T* residual;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t e = i * N;
    Vec<T, N> v = loadVec<N>(y + e);
    Vec<T, N> b{}, r{};
    if (bias) b = loadVec<N>(bias + e % g.k);
    if (residual) r = loadVec<N>(residual + e);
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float sum = toFloat(v.v[j]) + (bias ? toFloat(b.v[j]) : 0.f);
      v.v[j] = fromFloat<T>(ops::convolution::epilogue(g, sum, residual ? toFloat(r.v[j]) : 0.f));
    }
    storeVec<N>(y + e, v);
  }
};

template <typename T>
struct PackNhwcOp {
  const T* src;
  T* dst;
  int64_t inner, kh, kw;
  __host__ __device__ void operator()(int64_t i) const {
    // i walks dst [outer, kh, kw, inner].
    const int64_t c = i % inner;
    int64_t t = i / inner;
    const int64_t q = t % kw;
    t /= kw;
    const int64_t r = t % kh;
    const int64_t o = t / kh;
    dst[i] = src[((o * inner + c) * kh + r) * kw + q];
  }
};

}  // namespace

bool hasEpilogue(const ConvGeometry& g) { return g.hasBias || g.residual >= 0 || g.hasActivation; }

Status applyConvEpilogue(void* y, const void* const* in, const ConvGeometry& g,
                         const RunContext& ctx) {
  return launchTyped<FloatTypes>(g.type, [&](auto tag) {
    using T = decltype(tag);
    const T* bias = g.hasBias ? static_cast<const T*>(in[2]) : nullptr;
    const T* residual = g.residual >= 0 ? static_cast<const T*>(in[g.residual]) : nullptr;
    constexpr int N = kVectorElements<T>;
    const int64_t count = g.n * g.k * g.oh * g.ow;
    if (g.channelsLast && g.k % N == 0 && isAligned(y) && (!bias || isAligned(bias)) &&
        (!residual || isAligned(residual)))
      return launchElements(VectorEpilogueOp<T>{static_cast<T*>(y), bias, residual, g}, count / N,
                            ctx, "dense_conv_epilogue_vectorized");
    return launchElements(EpilogueOp<T>{static_cast<T*>(y), bias, residual, g}, count, ctx,
                          "dense_conv_epilogue");
  });
}

Status packFilterNhwc(void* dst, const void* src, DataType type, int64_t outer, int64_t inner,
                      int64_t kh, int64_t kw, const RunContext& ctx) {
  return launchTyped<FloatTypes>(type, [&](auto tag) {
    using T = decltype(tag);
    return launchElements(
        PackNhwcOp<T>{static_cast<const T*>(src), static_cast<T*>(dst), inner, kh, kw},
        outer * inner * kh * kw, ctx, "dense_pack_filter_nhwc");
  });
}

}  // namespace kiln::cuda
