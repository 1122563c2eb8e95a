// kiln's own kernels for the dense family: one output element per index, looping over the
// reduction with FP32 accumulation, for FP32/FP16/BF16 in linear or channels-last. Obviously
// right rather than fast; they are the reference the library tactics are checked against, and
// run on the host under RunContext::emulate. Also the small helper kernels of the library
// tactics (bias, gemm's C, NHWC filter packing).
#include <math.h>

#include "backends/cuda/dense_common.h"
#include "backends/cuda/elements.cuh"

namespace kiln::cuda::dense {
namespace {

// Logical (n, ch, y, x) of output element i, where i walks the output in memory order.
__host__ __device__ inline void decode4(int64_t i, int64_t C, int64_t H, int64_t W,
                                        bool channelsLast, int64_t* n, int64_t* ch, int64_t* y,
                                        int64_t* x) {
  if (channelsLast) {
    *ch = i % C;
    i /= C;
    *x = i % W;
    i /= W;
    *y = i % H;
    *n = i / H;
  } else {
    *x = i % W;
    i /= W;
    *y = i % H;
    i /= H;
    *ch = i % C;
    *n = i / C;
  }
}

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
    const int64_t c0 = (k / g.kg) * g.cg;
    float sum = bias ? toFloat(bias[k]) : 0.f;
    for (int64_t c = 0; c < g.cg; ++c) {
      const T* wk = w + (k * g.cg + c) * g.kh * g.kw;
      for (int64_t r = 0; r < g.kh; ++r) {
        const int64_t ih = oh * g.sh - g.padTop + r * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        for (int64_t q = 0; q < g.kw; ++q) {
          const int64_t iw = ow * g.sw - g.padLeft + q * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          sum += toFloat(x[offset4(n, c0 + c, ih, iw, g.c, g.h, g.w, g.channelsLast)]) *
                 toFloat(wk[r * g.kw + q]);
        }
      }
    }
    y[i] = fromFloat<T>(sum);
  }
};

// Input index along one axis that output index o reads through tap t, or -1 (the gather form of
// the transposed convolution, as the CPU reference).
__host__ __device__ inline int64_t deconvSource(int64_t o, int64_t t, int64_t stride,
                                                int64_t padBegin, int64_t dilation, int64_t in) {
  const int64_t v = o + padBegin - t * dilation;
  if (v < 0 || v % stride != 0) return -1;
  const int64_t idx = v / stride;
  return idx < in ? idx : -1;
}

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
      const int64_t ih = deconvSource(oh, r, g.sh, g.padTop, g.dh, g.h);
      if (ih < 0) continue;
      for (int64_t q = 0; q < g.kw; ++q) {
        const int64_t iw = deconvSource(ow, q, g.sw, g.padLeft, g.dw, g.w);
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

// Windows clipped to the image (padding never wins a max); the average divides by the window
// clipped to the padded input (countIncludePad) or to the image, exactly as the CPU reference.
template <typename T>
struct PoolOp {
  const T* x;
  T* y;
  PoolGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t n, c, oh, ow;
    decode4(i, g.c, g.oh, g.ow, g.channelsLast, &n, &c, &oh, &ow);
    const int64_t h0 = oh * g.sh - g.padTop, h1 = h0 + g.kh;
    const int64_t w0 = ow * g.sw - g.padLeft, w1 = w0 + g.kw;
    const int64_t ih0 = h0 > 0 ? h0 : 0, ih1 = h1 < g.h ? h1 : g.h;
    const int64_t iw0 = w0 > 0 ? w0 : 0, iw1 = w1 < g.w ? w1 : g.w;
    float v;
    if (g.isMax) {
      float m = -INFINITY;
      for (int64_t h = ih0; h < ih1 && m == m; ++h)
        for (int64_t ww = iw0; ww < iw1; ++ww) {
          const float e = toFloat(x[offset4(n, c, h, ww, g.c, g.h, g.w, g.channelsLast)]);
          if (e > m || e != e) m = e;  // NaN propagates, as on the CPU
          if (m != m) break;
        }
      v = m;
    } else {
      float sum = 0.f;
      for (int64_t h = ih0; h < ih1; ++h)
        for (int64_t ww = iw0; ww < iw1; ++ww)
          sum += toFloat(x[offset4(n, c, h, ww, g.c, g.h, g.w, g.channelsLast)]);
      int64_t count;
      if (g.countIncludePad) {
        const int64_t hEnd = h1 < g.h + g.padBottom ? h1 : g.h + g.padBottom;
        const int64_t wEnd = w1 < g.w + g.padRight ? w1 : g.w + g.padRight;
        count = (hEnd - h0) * (wEnd - w0);
      } else {
        count = (ih1 - ih0) * (iw1 - iw0);
      }
      v = sum / static_cast<float>(count);
    }
    y[i] = fromFloat<T>(v);
  }
};

template <typename T>
struct MatmulOp {
  const T* a;
  const T* b;
  T* y;
  MatmulGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t col = i % g.n;
    int64_t t = i / g.n;
    const int64_t row = t % g.m;
    t /= g.m;
    int64_t aOff = 0, bOff = 0;
    for (int32_t d = g.batchRank - 1; d >= 0; --d) {
      const int64_t coord = t % g.batch[d];
      t /= g.batch[d];
      aOff += coord * g.aStride[d];
      bOff += coord * g.bStride[d];
    }
    const T* am = a + aOff;
    const T* bm = b + bOff;
    float sum = 0.f;
    for (int64_t p = 0; p < g.k; ++p) {
      const float av = toFloat(g.transA ? am[p * g.lda + row] : am[row * g.lda + p]);
      const float bv = toFloat(g.transB ? bm[col * g.ldb + p] : bm[p * g.ldb + col]);
      sum += av * bv;
    }
    y[i] = fromFloat<T>(sum);
  }
};

template <typename T>
__host__ __device__ inline float cAt(const T* c, const GemmGeometry& g, int64_t row, int64_t col) {
  return toFloat(c[(g.cRows == 1 ? 0 : row) * g.cCols + (g.cCols == 1 ? 0 : col)]);
}

template <typename T>
struct GemmOp {
  const T* a;
  const T* b;
  const T* c;
  T* y;
  GemmGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t col = i % g.n, row = i / g.n;
    float sum = 0.f;
    for (int64_t p = 0; p < g.k; ++p) {
      const float av = toFloat(g.transA ? a[p * g.lda + row] : a[row * g.lda + p]);
      const float bv = toFloat(g.transB ? b[col * g.ldb + p] : b[p * g.ldb + col]);
      sum += av * bv;
    }
    float v = g.alpha * sum;
    if (c) v += g.beta * cAt(c, g, row, col);
    y[i] = fromFloat<T>(v);
  }
};

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
struct ScaledCOp {
  const T* c;
  T* y;
  GemmGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    y[i] = fromFloat<T>(g.beta * cAt(c, g, i / g.n, i % g.n));
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

Status badType(DataType t) {
  return invalidArgument(std::string("dense kernels: unsupported type ") + dataTypeName(t));
}

class ConvReference final : public Kernel {
 public:
  ConvReference(const ConvGeometry& g, bool deconv) : g_(g), deconv_(deconv) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = badType(g_.type);
    const int64_t count = g_.n * g_.k * g_.oh * g_.ow;
    dispatchFloat(g_.type, [&](auto tag) {
      using T = decltype(tag);
      const T* x = static_cast<const T*>(in[0]);
      const T* w = static_cast<const T*>(in[1]);
      const T* bias = g_.hasBias ? static_cast<const T*>(in[2]) : nullptr;
      T* y = static_cast<T*>(out[0]);
      s = deconv_ ? launchElements(DeconvOp<T>{x, w, bias, y, g_}, count, ctx, "dense_deconv_ref")
                  : launchElements(ConvOp<T>{x, w, bias, y, g_}, count, ctx, "dense_conv_ref");
    });
    return s;
  }

 private:
  ConvGeometry g_;
  bool deconv_;
};

class PoolReference final : public Kernel {
 public:
  explicit PoolReference(const PoolGeometry& g) : g_(g) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = badType(g_.type);
    dispatchFloat(g_.type, [&](auto tag) {
      using T = decltype(tag);
      s = launchElements(PoolOp<T>{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), g_},
                         g_.n * g_.c * g_.oh * g_.ow, ctx, "dense_pool_ref");
    });
    return s;
  }

 private:
  PoolGeometry g_;
};

class MatmulReference final : public Kernel {
 public:
  explicit MatmulReference(const MatmulGeometry& g) : g_(g) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = badType(g_.type);
    dispatchFloat(g_.type, [&](auto tag) {
      using T = decltype(tag);
      s = launchElements(MatmulOp<T>{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                     static_cast<T*>(out[0]), g_},
                         g_.batchCount * g_.m * g_.n, ctx, "dense_matmul_ref");
    });
    return s;
  }

 private:
  MatmulGeometry g_;
};

class GemmReference final : public Kernel {
 public:
  explicit GemmReference(const GemmGeometry& g) : g_(g) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = badType(g_.type);
    dispatchFloat(g_.type, [&](auto tag) {
      using T = decltype(tag);
      s = launchElements(
          GemmOp<T>{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                    g_.hasC ? static_cast<const T*>(in[2]) : nullptr, static_cast<T*>(out[0]), g_},
          g_.m * g_.n, ctx, "dense_gemm_ref");
    });
    return s;
  }

 private:
  GemmGeometry g_;
};

}  // namespace

std::unique_ptr<Kernel> createConvReference(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  if (!readConvolution(c, "reference", &g, whyNot)) return nullptr;
  return std::make_unique<ConvReference>(g, false);
}

std::unique_ptr<Kernel> createDeconvReference(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  if (!readDeconvolution(c, "reference", &g, whyNot)) return nullptr;
  return std::make_unique<ConvReference>(g, true);
}

std::unique_ptr<Kernel> createPoolReference(const KernelConfig& c, std::string* whyNot) {
  PoolGeometry g;
  if (!readPooling(c, "reference", &g, whyNot)) return nullptr;
  return std::make_unique<PoolReference>(g);
}

std::unique_ptr<Kernel> createMatmulReference(const KernelConfig& c, std::string* whyNot) {
  MatmulGeometry g;
  if (!readMatmul(c, "reference", &g, whyNot)) return nullptr;
  return std::make_unique<MatmulReference>(g);
}

std::unique_ptr<Kernel> createGemmReference(const KernelConfig& c, std::string* whyNot) {
  GemmGeometry g;
  if (!readGemm(c, "reference", &g, whyNot)) return nullptr;
  return std::make_unique<GemmReference>(g);
}

Status addChannelBias(void* y, const void* bias, DataType type, int64_t n, int64_t channels,
                      int64_t plane, bool channelsLast, const RunContext& ctx) {
  Status s = badType(type);
  dispatchFloat(type, [&](auto tag) {
    using T = decltype(tag);
    s = launchElements(
        BiasOp<T>{static_cast<T*>(y), static_cast<const T*>(bias), channels, plane, channelsLast},
        n * channels * plane, ctx, "dense_add_bias");
  });
  return s;
}

Status fillScaledC(void* y, const void* cData, const GemmGeometry& g, const RunContext& ctx) {
  Status s = badType(g.type);
  dispatchFloat(g.type, [&](auto tag) {
    using T = decltype(tag);
    s = launchElements(ScaledCOp<T>{static_cast<const T*>(cData), static_cast<T*>(y), g}, g.m * g.n,
                       ctx, "dense_gemm_c");
  });
  return s;
}

Status packFilterNhwc(void* dst, const void* src, DataType type, int64_t outer, int64_t inner,
                      int64_t kh, int64_t kw, const RunContext& ctx) {
  Status s = badType(type);
  dispatchFloat(type, [&](auto tag) {
    using T = decltype(tag);
    s = launchElements(
        PackNhwcOp<T>{static_cast<const T*>(src), static_cast<T*>(dst), inner, kh, kw},
        outer * inner * kh * kw, ctx, "dense_pack_filter_nhwc");
  });
  return s;
}

}  // namespace kiln::cuda::dense
