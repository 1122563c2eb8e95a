// The patch gathers of convolution's GEMM tactics (convolution_cuda.cpp).
//
// patch_gemm's: a convolution whose
// stride is its kernel, unpadded and undilated, reads every input element once, in
// non-overlapping KH x KW patches (a vision transformer's patch embedding). Over channels-last X
// [N, H, W, C], the patch of output pixel (n, oy, ox) is rows oy KH .. oy KH + KH - 1 of X, each a
// contiguous run of KW C elements from column ox KW: so P [N OH OW, KH KW C] (row m = (n, oy, ox),
// column (ky, kx, c), the order of channels-last weights [K, KH, KW, C]) is X with its ky and ox
// axes swapped, and Y = P W^T is the convolution. A per-element kernel (emulatable on the host).
//
// im2col_gemm's: any ungrouped convolution over channels-last X (stride, padding, dilation), rows
// [rowBegin, rowBegin + rows) of its patch matrix P [N OH OW, columns], column (ky, kx, c) as in
// channels-last weights, zero where the tap falls in the padding and in the columns past KH KW C
// that round a row up to a multiple of 8 elements (16-byte rows for cuBLASLt's fast kernels).
// One index writes 8 adjacent columns of a row as one or two 16-byte stores, so that the writes
// coalesce and the index arithmetic is paid once per 8 elements.
#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/convolution/convolution_cuda.h"

namespace kiln::cuda {
namespace {

template <class T>
struct PatchGather {
  const T* x;
  T* p;
  ConvGeometry g;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t run = g.kw * g.c;  // one patch row: KW C contiguous elements of X
    const int64_t e = i % run;
    int64_t rest = i / run;
    const int64_t ky = rest % g.kh;
    rest /= g.kh;
    const int64_t ox = rest % g.ow;
    rest /= g.ow;
    const int64_t oy = rest % g.oh;
    const int64_t n = rest / g.oh;
    p[i] = x[((n * g.h + oy * g.kh + ky) * g.w + ox * g.kw) * g.c + e];
  }
};

template <class T>
struct Im2colGather {
  const T* x;
  T* p;
  ConvGeometry g;
  int64_t columns;  // a multiple of 8
  int64_t rowBegin;
  // The index arithmetic in 32 bits, a third of the instructions of 64-bit division (the tactic
  // declines where a row or column index would not fit); only the input offset is 64-bit.
  __host__ __device__ void operator()(int64_t i) const {
    const uint32_t groups = static_cast<uint32_t>(columns / 8);
    const uint32_t local = static_cast<uint32_t>(i);  // a chunk has fewer than 2^31 groups
    const uint32_t row = static_cast<uint32_t>(rowBegin) + local / groups;
    const uint32_t j = local % groups * 8;
    const uint32_t ow = static_cast<uint32_t>(g.ow), oh = static_cast<uint32_t>(g.oh);
    const uint32_t cs = static_cast<uint32_t>(g.c), kw = static_cast<uint32_t>(g.kw);
    const uint32_t pixel = row / ow;
    const int32_t ox = static_cast<int32_t>(row - pixel * ow);
    const int32_t oy = static_cast<int32_t>(pixel % oh);
    const int64_t n = pixel / oh;
    const uint32_t tap = j / cs;
    uint32_t c = j - tap * cs;
    int32_t kx = static_cast<int32_t>(tap % kw), ky = static_cast<int32_t>(tap / kw);
    const int32_t y0 = oy * static_cast<int32_t>(g.sh) - static_cast<int32_t>(g.padTop);
    const int32_t x0 = ox * static_cast<int32_t>(g.sw) - static_cast<int32_t>(g.padLeft);
    alignas(16) T v[8];
    for (int e = 0; e < 8; ++e) {
      const int32_t iy = y0 + ky * static_cast<int32_t>(g.dh);
      const int32_t ix = x0 + kx * static_cast<int32_t>(g.dw);
      const bool inside = ky < g.kh && iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
      v[e] = inside ? x[((n * g.h + iy) * g.w + ix) * g.c + c] : fromFloat<T>(0.f);
      if (++c == cs) {
        c = 0;
        if (++kx == static_cast<int32_t>(kw)) {
          kx = 0;
          ++ky;
        }
      }
    }
    T* dst = p + i * 8;  // the chunk's row local / groups, column j
#ifdef __CUDA_ARCH__
    // P's rows are 16-byte multiples from a 256-byte aligned workspace.
    for (size_t k = 0; k < sizeof(v) / 16; ++k)
      reinterpret_cast<uint4*>(dst)[k] = reinterpret_cast<const uint4*>(v)[k];
#else
    for (int e = 0; e < 8; ++e) dst[e] = v[e];
#endif
  }
};

template <template <class> class Gather, class... Args>
Status launchTyped(DataType type, const void* x, void* p, int64_t count, const RunContext& ctx,
                   const char* name, Args... args) {
  switch (type) {
    case DataType::kHALF:
      return launchElements(
          Gather<__half>{static_cast<const __half*>(x), static_cast<__half*>(p), args...}, count,
          ctx, name);
    case DataType::kBF16:
      return launchElements(Gather<__nv_bfloat16>{static_cast<const __nv_bfloat16*>(x),
                                                  static_cast<__nv_bfloat16*>(p), args...},
                            count, ctx, name);
    default:
      return launchElements(
          Gather<float>{static_cast<const float*>(x), static_cast<float*>(p), args...}, count, ctx,
          name);
  }
}

}  // namespace

Status launchPatchGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                         const RunContext& ctx) {
  return launchTyped<PatchGather>(type, x, p, g.n * g.oh * g.ow * g.kh * g.kw * g.c, ctx,
                                  "convolution_patch_gather", g);
}

Status launchIm2colGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                          int64_t columns, int64_t rowBegin, int64_t rows, const RunContext& ctx) {
  return launchTyped<Im2colGather>(type, x, p, rows * (columns / 8), ctx,
                                   "convolution_im2col_gather", g, columns, rowBegin);
}

}  // namespace kiln::cuda
