// Building blocks for kiln's own CUDA kernels written as a per-element function:
//   struct MyOp { ...; __host__ __device__ void operator()(int64_t i) const; };
//   return launchElements(MyOp{...}, count, ctx, "my_op");
// On the GPU that is a grid-stride loop; under RunContext::emulate the same function runs on the
// CPU over host buffers, which is how the index arithmetic of every such kernel is tested on
// machines without a GPU (tests/cuda_ops).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel.h"
#include "kiln/types.h"

namespace kiln::cuda {

// Storage type <-> float. FP16/BF16 arithmetic happens in float, rounding once on store.
template <typename T>
__host__ __device__ inline float toFloat(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return static_cast<float>(v);
}
template <typename T>
__host__ __device__ inline T fromFloat(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return static_cast<T>(v);
}

template <typename Op>
__global__ void elementsKernel(Op op, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    op(i);
  }
}

// Runs op(i) for i in [0, count) on ctx.stream (or on the host under emulation).
template <typename Op>
Status launchElements(const Op& op, int64_t count, const RunContext& ctx, const char* name) {
  if (count <= 0) return Status::ok();
  if (ctx.emulate) {
    for (int64_t i = 0; i < count; ++i) op(i);
    return Status::ok();
  }
  constexpr int kThreads = 256;
  // Enough blocks to fill any current GPU several times over; the loop covers the rest.
  const int64_t blocks = std::min<int64_t>((count + kThreads - 1) / kThreads, 65536);
  elementsKernel<<<static_cast<unsigned>(blocks), kThreads, 0,
                   static_cast<cudaStream_t>(ctx.stream)>>>(op, count);
  KILN_CHECK_LAUNCH(name);
  return Status::ok();
}

// Row-major strides of logical dims; element offset of a logical index under a format
// (channels-last: rank 4, memory order N, H, W, C).
struct Shape {
  int32_t rank = 0;
  int64_t d[Dims::kMaxDims] = {};
};

inline Shape shapeOf(const Dims& dims) {
  Shape s;
  s.rank = dims.nbDims;
  for (int32_t i = 0; i < dims.nbDims; ++i) s.d[i] = dims.d[i];
  return s;
}

// Offset in memory of logical NCHW coordinates for a rank-4 tensor in `format`.
__host__ __device__ inline int64_t offset4(int64_t n, int64_t c, int64_t h, int64_t w, int64_t C,
                                           int64_t H, int64_t W, bool channelsLast) {
  return channelsLast ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

}  // namespace kiln::cuda
