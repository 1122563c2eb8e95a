// ScaleBias on CUDA: one grid-stride elementwise kernel per type.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "scale_bias_cuda.h"

namespace kiln_example {
namespace {

// No fused multiply-add: the CPU path rounds the product, then the sum, and so does this, so that
// the two paths agree bit for bit.
__global__ void scaleBiasFloat(const float* x, float* y, int64_t n, float scale, float bias) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    y[i] = __fadd_rn(__fmul_rn(x[i], scale), bias);
}

__global__ void scaleBiasHalf(const __half* x, __half* y, int64_t n, float scale, float bias) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(blockDim.x) * gridDim.x)
    y[i] = __float2half_rn(__fadd_rn(__fmul_rn(__half2float(x[i]), scale), bias));
}

}  // namespace

int32_t launchScaleBias(const void* x, void* y, int64_t n, float scale, float bias, bool half,
                        void* stream) noexcept {
  if (n <= 0) return 0;
  constexpr int kThreads = 256;
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  const unsigned blocks = static_cast<unsigned>(wanted < 4096 ? wanted : 4096);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (half) {
    scaleBiasHalf<<<blocks, kThreads, 0, s>>>(static_cast<const __half*>(x),
                                              static_cast<__half*>(y), n, scale, bias);
  } else {
    scaleBiasFloat<<<blocks, kThreads, 0, s>>>(static_cast<const float*>(x), static_cast<float*>(y),
                                               n, scale, bias);
  }
  return static_cast<int32_t>(cudaGetLastError());
}

const char* scaleBiasCudaErrorName(int32_t code) noexcept {
  return cudaGetErrorName(static_cast<cudaError_t>(code));
}

}  // namespace kiln_example
