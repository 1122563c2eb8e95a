#include "backends/cuda/context_resources.h"

#include <cuda_runtime.h>

namespace kiln::cuda {

CudaContextResources::~CudaContextResources() {
  auto stream = static_cast<cudaStream_t>(stream_);
  for (void* p : allocations_) cudaFreeAsync(p, stream);
  if (stream) cudaStreamSynchronize(stream);
  if (pool_) cudaMemPoolDestroy(static_cast<cudaMemPool_t>(pool_));
  if (stream) cudaStreamDestroy(stream);
}

void* CudaContextResources::allocatePersistent(size_t bytes, size_t alignment) noexcept {
  // The pool hands out 256-byte aligned blocks; a stricter alignment is refused, not faked.
  if (bytes == 0 || alignment > 256 || (alignment & (alignment - 1)) != 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!stream_) {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    stream_ = s;
  }
  if (!pool_) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    cudaMemPool_t pool = nullptr;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    pool_ = pool;
  }
  void* p = nullptr;
  auto stream = static_cast<cudaStream_t>(stream_);
  if (cudaMallocFromPoolAsync(&p, bytes, static_cast<cudaMemPool_t>(pool_), stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  allocations_.push_back(p);
  return p;
}

}  // namespace kiln::cuda
