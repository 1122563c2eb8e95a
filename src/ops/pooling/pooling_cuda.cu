// Pooling's CUDA tactics (max, average, global max, global average), FP32 accumulation, for
// FP32/FP16/BF16; both also run on the host under RunContext::emulate. The window, divisor and NaN
// rules are the CPU's (pooling_semantics.h). No library tactic: the validation and the tactic list
// live here too.
//   channels_last_vectorized  channels-last tensors whose channel count is a multiple of the
//                             16-byte vector: one thread per 16 bytes of channels of one output
//                             pixel, each window element one 16-byte load (a CNN's stem max pool
//                             is otherwise its slowest layer after the convolutions).
//   reference                 one output element per index, either format.
#include <math.h>

#include <string>

#include "backends/cuda/elements.cuh"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/rank4_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "backends/cuda/vector_access.cuh"
#include "ops/op.h"
#include "ops/pooling/pooling_semantics.h"

namespace kiln::cuda {
namespace {

// Global pooling is described as a window over the whole image (stride 1, no pads).
struct PoolGeometry {
  DataType type = DataType::kFLOAT;
  bool channelsLast = false;
  bool isMax = true;
  bool countIncludePad = false;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
};

// True with *g filled when the configuration is one this kernel can run (see
// backends/cuda/float_layer_checks.h), else false with *whyNot prefixed by `tactic`.
bool readPooling(const KernelConfig& c, const char* tactic, PoolGeometry* g, std::string* whyNot) {
  const auto* p =
      validateFloatLayer<PoolingParams>(c, LayerType::kPOOLING, "pooling", tactic, true, whyNot);
  if (!p) return false;
  fillSpatialGeometry(c, g);
  g->isMax = p->type == PoolingType::kMAX || p->type == PoolingType::kGLOBAL_MAX;
  if (p->type == PoolingType::kGLOBAL_MAX || p->type == PoolingType::kGLOBAL_AVERAGE) {
    // One window over the whole image: count = h * w, as the CPU divides by the plane.
    g->kh = g->h;
    g->kw = g->w;
    g->countIncludePad = false;
    return true;
  }
  g->kh = p->kernelH;
  g->kw = p->kernelW;
  g->sh = p->strideH;
  g->sw = p->strideW;
  g->padTop = p->padTop;
  g->padLeft = p->padLeft;
  g->padBottom = p->padBottom;
  g->padRight = p->padRight;
  g->countIncludePad = p->countIncludePad;
  return true;
}

template <typename T>
struct PoolOp {
  const T* x;
  T* y;
  PoolGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    namespace pooling = ops::pooling;
    int64_t n, c, oh, ow;
    decode4(i, g.c, g.oh, g.ow, g.channelsLast, &n, &c, &oh, &ow);
    const pooling::Window wh = pooling::window(oh, g.kh, g.sh, g.padTop, g.h);
    const pooling::Window ww = pooling::window(ow, g.kw, g.sw, g.padLeft, g.w);
    float v;
    if (g.isMax) {
      float m = -INFINITY;
      for (int64_t ih = wh.first; ih < wh.last && !pooling::isNan(m); ++ih)
        for (int64_t iw = ww.first; iw < ww.last; ++iw) {
          const float e = toFloat(x[offset4(n, c, ih, iw, g.c, g.h, g.w, g.channelsLast)]);
          m = pooling::maxStep(m, e);
          if (pooling::isNan(m)) break;
        }
      v = m;
    } else {
      float sum = 0.f;
      for (int64_t ih = wh.first; ih < wh.last; ++ih)
        for (int64_t iw = ww.first; iw < ww.last; ++iw)
          sum += toFloat(x[offset4(n, c, ih, iw, g.c, g.h, g.w, g.channelsLast)]);
      const int64_t count =
          pooling::averageCount(wh, ww, g.h, g.w, g.padBottom, g.padRight, g.countIncludePad);
      v = sum / static_cast<float>(count);
    }
    y[i] = fromFloat<T>(v);
  }
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  PoolGeometry g;
  if (!readPooling(c, "reference", &g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        return launchElements(PoolOp<T>{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), g},
                              g.n * g.c * g.oh * g.ow, ctx, "dense_pool_ref");
      });
}

// Channels-last: vector i holds N consecutive channels of output pixel (n, oh, ow); every window
// element is N consecutive channels of one input pixel, one load.
template <typename T>
struct VectorPoolOp {
  static constexpr int N = kVectorElements<T>;
  const T* x;
  T* y;
  PoolGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    namespace pooling = ops::pooling;
    // Vector i of the channels-last output viewed as [N, C / N, OH, OW] vectors.
    int64_t n, cv, oh, ow;
    decode4(i, g.c / N, g.oh, g.ow, true, &n, &cv, &oh, &ow);
    const pooling::Window wh = pooling::window(oh, g.kh, g.sh, g.padTop, g.h);
    const pooling::Window ww = pooling::window(ow, g.kw, g.sw, g.padLeft, g.w);
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = g.isMax ? -INFINITY : 0.f;
    for (int64_t ih = wh.first; ih < wh.last; ++ih)
      for (int64_t iw = ww.first; iw < ww.last; ++iw) {
        const Vec<T, N> e = loadVec<N>(x + ((n * g.h + ih) * g.w + iw) * g.c + cv * N);
#pragma unroll
        for (int j = 0; j < N; ++j)
          acc[j] = g.isMax ? pooling::maxStep(acc[j], toFloat(e.v[j])) : acc[j] + toFloat(e.v[j]);
      }
    Vec<T, N> out;
    const float count = g.isMax
                            ? 1.f
                            : static_cast<float>(pooling::averageCount(
                                  wh, ww, g.h, g.w, g.padBottom, g.padRight, g.countIncludePad));
#pragma unroll
    for (int j = 0; j < N; ++j) out.v[j] = fromFloat<T>(g.isMax ? acc[j] : acc[j] / count);
    storeVec<N>(y + i * N, out);
  }
};

std::unique_ptr<Kernel> createChannelsLastVectorized(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "channels_last_vectorized";
  PoolGeometry g;
  if (!readPooling(c, kTactic, &g, whyNot)) return nullptr;
  const int64_t n = g.type == DataType::kFLOAT ? 4 : 8;
  if (!g.channelsLast || g.c % n != 0) {
    if (whyNot)
      *whyNot = std::string(kTactic) + ": needs channels-last tensors with a multiple of " +
                std::to_string(n) + " channels";
    return nullptr;
  }
  return makeTypedKernel<FloatTypes>(
      g.type, [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const T* x = static_cast<const T*>(in[0]);
        T* y = static_cast<T*>(out[0]);
        const int64_t count = g.n * g.c * g.oh * g.ow;
        // A binding off the 16-byte grid takes the per-element kernel.
        if (!isAligned(x) || !isAligned(y))
          return launchElements(PoolOp<T>{x, y, g}, count, ctx, "dense_pool_ref");
        return launchElements(VectorPoolOp<T>{x, y, g}, count / kVectorElements<T>, ctx,
                              "dense_pool_channels_last_vectorized");
      });
}

// Fastest first, kiln's reference last; plans and timing caches record the names.
constexpr Tactic kTactics[] = {{"channels_last_vectorized", &createChannelsLastVectorized},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Pooling::cudaTactics() { return cuda::kTactics; }
