// The patch gather of convolution's patch_gemm tactic (convolution_cuda.cpp): a convolution whose
// stride is its kernel, unpadded and undilated, reads every input element once, in
// non-overlapping KH x KW patches (a vision transformer's patch embedding). Over channels-last X
// [N, H, W, C], the patch of output pixel (n, oy, ox) is rows oy KH .. oy KH + KH - 1 of X, each a
// contiguous run of KW C elements from column ox KW: so P [N OH OW, KH KW C] (row m = (n, oy, ox),
// column (ky, kx, c), the order of channels-last weights [K, KH, KW, C]) is X with its ky and ox
// axes swapped, and Y = P W^T is the convolution. A per-element kernel (emulatable on the host).
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

}  // namespace

Status launchPatchGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                         const RunContext& ctx) {
  const int64_t count = g.n * g.oh * g.ow * g.kh * g.kw * g.c;
  switch (type) {
    case DataType::kHALF:
      return launchElements(
          PatchGather<__half>{static_cast<const __half*>(x), static_cast<__half*>(p), g}, count,
          ctx, "convolution_patch_gather");
    case DataType::kBF16:
      return launchElements(PatchGather<__nv_bfloat16>{static_cast<const __nv_bfloat16*>(x),
                                                       static_cast<__nv_bfloat16*>(p), g},
                            count, ctx, "convolution_patch_gather");
    default:
      return launchElements(
          PatchGather<float>{static_cast<const float*>(x), static_cast<float*>(p), g}, count, ctx,
          "convolution_patch_gather");
  }
}

}  // namespace kiln::cuda
