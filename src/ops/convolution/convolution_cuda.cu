// kiln's own CUDA convolutions, both per-element functions that run on the host under
// RunContext::emulate, with the CPU's index rule (convolution_semantics.h), FP32 accumulation and
// the fused epilogue (bias, residual, activation) for FP32/FP16/BF16:
// - the reference: one output element per index, looping over the reduction, linear or
//   channels-last (weights in either). Obviously right rather than fast: it is what the library
//   tactics are checked against.
// - depthwise_vectorized: a 3x3 depthwise convolution (groups = C = K, as MobileNet's and
//   EfficientNet's blocks) over channels-last tensors whose channel count is a multiple of the
//   16-byte vector. One index is N consecutive channels of a strip of 4 output pixels along the
//   width (DepthwiseStripOp): 16-byte loads of the input columns the strip shares and of the N
//   channels' 9 filter taps, 32-bit index arithmetic, the epilogue fused. These layers are memory
//   bound; cuDNN's graph engines ran MobileNetV2's at a third to a half of the card's bandwidth,
//   with the epilogue as a second pass. (The first form, one output pixel per index with 64-bit
//   indices, ran 1.2 to 1.6 times slower than cuDNN on an H100: nine input and nine filter loads
//   and three 64-bit divisions per 8 outputs.)
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

// The 32-bit sizes of a depthwise layer (createDepthwiseVectorized checks that every offset into
// its tensors fits): 64-bit division and multiplication cost several instructions each, and these
// kernels are short enough per output that index arithmetic showed in their time.
struct DepthwiseSizes {
  int32_t h, w, c, oh, ow;
  int32_t sh, sw, dh, dw, padTop, padLeft;
  int32_t vectors, strips;  // C / N vectors per pixel; output strips per row (ceil(OW / P))
};

// Channels-last 3x3 depthwise over a strip: index i holds N consecutive channels (vector cv) of P
// neighbouring output pixels along the width, (n, oh, ow0 .. ow0 + P - 1). The N channels' 9
// filter taps lie contiguous (a depthwise filter [K, 1, 3, 3] is the same bytes in either
// format): nine 16-byte loads, made once for the P outputs. With SW, the width stride, known at
// compile time (1 or 2, dilation 1), the strip's outputs share input columns: each kernel row
// reads (P - 1) SW + 3 columns, once each, instead of 3 P. SW = 0 is any stride and dilation,
// P = 1, one load per tap.
template <typename T, int P, int SW>
struct DepthwiseStripOp {
  static constexpr int N = kVectorElements<T>;
  static constexpr int kTaps = 9;
  static constexpr int kColumns = SW > 0 ? (P - 1) * SW + 3 : 3;
  static_assert(SW > 0 || P == 1, "a run-time stride takes one output per index");
  const T* x;
  const T* w;
  const T* bias;
  const T* residual;  // of y's shape and format, or nullptr
  T* y;
  ConvGeometry g;  // the activation fields (epilogue)
  DepthwiseSizes z;

  __host__ __device__ void operator()(int64_t index) const {
    int32_t i = static_cast<int32_t>(index);
    const int32_t cv = i % z.vectors;
    i /= z.vectors;
    const int32_t ow0 = i % z.strips * P;
    i /= z.strips;
    const int32_t oh = i % z.oh;
    const int32_t n = i / z.oh;
    Vec<T, N> filter[kTaps];
#pragma unroll
    for (int v = 0; v < kTaps; ++v) filter[v] = loadVec<N>(w + (cv * kTaps + v) * N);
    float acc[P][N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const float b = bias ? toFloat(bias[cv * N + j]) : 0.f;
#pragma unroll
      for (int p = 0; p < P; ++p) acc[p][j] = b;
    }
    const int32_t iw0 = ow0 * (SW > 0 ? SW : z.sw) - z.padLeft;
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const int32_t ih = oh * z.sh - z.padTop + r * z.dh;
      if (KILN_CONVOLUTION_IS_PADDING(ih, z.h)) continue;
      const T* row = x + (n * z.h + ih) * z.w * z.c + cv * N;
      // The row's columns this strip reads. A tap in the padding is skipped, not multiplied by
      // zero, as the reference does (an infinite filter tap times zero would be NaN).
      Vec<T, N> cols[kColumns];
      bool inside[kColumns];
#pragma unroll
      for (int q = 0; q < kColumns; ++q) {
        const int32_t iw = iw0 + q * (SW > 0 ? 1 : z.dw);
        inside[q] = !KILN_CONVOLUTION_IS_PADDING(iw, z.w);
        cols[q] = inside[q] ? loadVec<N>(row + iw * z.c) : Vec<T, N>{};
      }
#pragma unroll
      for (int q = 0; q < 3; ++q)
#pragma unroll
        for (int j = 0; j < N; ++j) {
          // Channel j's tap (r, q) is element j * 9 + r * 3 + q of the vector's filters.
          const int at = j * kTaps + r * 3 + q;
          const float f = toFloat(filter[at / N].v[at % N]);
#pragma unroll
          for (int p = 0; p < P; ++p) {
            const int col = p * (SW > 0 ? SW : 1) + q;
            if (inside[col]) acc[p][j] += toFloat(cols[col].v[j]) * f;
          }
        }
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const int32_t ow = ow0 + p;
      if (ow >= z.ow) break;  // the row's last strip may be partial
      const int32_t o = ((n * z.oh + oh) * z.ow + ow) * z.c + cv * N;
      Vec<T, N> res{};
      if (residual) res = loadVec<N>(residual + o);
      Vec<T, N> out;
#pragma unroll
      for (int j = 0; j < N; ++j)
        out.v[j] = fromFloat<T>(
            ops::convolution::epilogue(g, acc[p][j], residual ? toFloat(res.v[j]) : 0.f));
      storeVec<N>(y + o, out);
    }
  }
};

// Outputs per index of depthwise_vectorized's strips.
constexpr int kDepthwiseStrip = 4;

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
  // Every offset into the input and output, and the strip count, as an int (the index arithmetic
  // is 32-bit).
  const int64_t strips = (g.ow + kDepthwiseStrip - 1) / kDepthwiseStrip;
  constexpr int64_t kMax = INT32_MAX;
  if (g.n * g.h * g.w * g.c > kMax || g.n * g.oh * g.ow * g.k > kMax ||
      g.n * g.oh * strips * (g.c / vector) > kMax || g.sh > kMax || g.sw > kMax || g.dh > kMax ||
      g.dw > kMax || g.padTop > kMax || g.padLeft > kMax) {
    if (whyNot)
      *whyNot =
          std::string(kTactic) + ": tensors of 2^31 elements or more (its offsets are 32-bit)";
    return nullptr;
  }
  DepthwiseSizes z;
  z.h = static_cast<int32_t>(g.h);
  z.w = static_cast<int32_t>(g.w);
  z.c = static_cast<int32_t>(g.c);
  z.oh = static_cast<int32_t>(g.oh);
  z.ow = static_cast<int32_t>(g.ow);
  z.sh = static_cast<int32_t>(g.sh);
  z.sw = static_cast<int32_t>(g.sw);
  z.dh = static_cast<int32_t>(g.dh);
  z.dw = static_cast<int32_t>(g.dw);
  z.padTop = static_cast<int32_t>(g.padTop);
  z.padLeft = static_cast<int32_t>(g.padLeft);
  z.vectors = static_cast<int32_t>(g.c / vector);
  return makeTypedKernel<FloatTypes>(
      g.type, [g, z](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const T* x = static_cast<const T*>(in[0]);
        const T* w = static_cast<const T*>(in[1]);
        const T* bias = g.hasBias ? static_cast<const T*>(in[2]) : nullptr;
        const T* residual = g.residual >= 0 ? static_cast<const T*>(in[g.residual]) : nullptr;
        T* y = static_cast<T*>(out[0]);
        // A binding off the 16-byte grid takes the per-element reference.
        if (!isAligned(x) || !isAligned(w) || !isAligned(y) || (residual && !isAligned(residual)))
          return launchElements(ConvOp<T>{x, w, bias, residual, y, g}, g.n * g.k * g.oh * g.ow, ctx,
                                "dense_conv_ref");
        // Strips share input columns where the width stride is 1 or 2 without dilation.
        auto strips = [&](auto op, int outputsPerIndex) {
          op.z.strips = (z.ow + outputsPerIndex - 1) / outputsPerIndex;
          return launchElements(op, int64_t{g.n} * z.oh * op.z.strips * z.vectors, ctx,
                                "dense_conv_depthwise_vectorized");
        };
        constexpr int S = kDepthwiseStrip;
        if (z.dw == 1 && z.sw == 1)
          return strips(DepthwiseStripOp<T, S, 1>{x, w, bias, residual, y, g, z}, S);
        if (z.dw == 1 && z.sw == 2)
          return strips(DepthwiseStripOp<T, S, 2>{x, w, bias, residual, y, g, z}, S);
        return strips(DepthwiseStripOp<T, 1, 0>{x, w, bias, residual, y, g, z}, 1);
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
