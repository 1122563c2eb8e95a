// kiln's own kernels around the cuDNN convolution tactic (see cudnn_convolution.h): the bias
// after the library call and the NHWC filter packing before it. Every float type, both formats.
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"

namespace kiln::cuda {
namespace {

template <typename T>
struct BiasOp {
  T* y;
  const T* bias;
  int64_t channels, plane;
  bool channelsLast;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t ch = channelsLast ? i % channels : (i / plane) % channels;
    y[i] = fromFloat<T>(toFloat(y[i]) + toFloat(bias[ch]));
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

Status addChannelBias(void* y, const void* bias, DataType type, int64_t n, int64_t channels,
                      int64_t plane, bool channelsLast, const RunContext& ctx) {
  return launchTyped<FloatTypes>(type, [&](auto tag) {
    using T = decltype(tag);
    return launchElements(
        BiasOp<T>{static_cast<T*>(y), static_cast<const T*>(bias), channels, plane, channelsLast},
        n * channels * plane, ctx, "dense_add_bias");
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
