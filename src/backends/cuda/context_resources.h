// What a CUDA execution context hands its plugins' context objects (IPluginContextResources):
// persistent memory from a stream-ordered pool and cuBLAS/cuDNN handles, all owned by the
// context and each created only when first asked for.
#pragma once

#include <mutex>
#include <vector>

#include "backends/cuda/library_handles.h"
#include "kiln/plugin.h"

namespace kiln::cuda {

class CudaContextResources final : public IPluginContextResources {
 public:
  CudaContextResources(int32_t device, LibraryHandles& libraries)
      : device_(device), libraries_(libraries) {}
  // Frees every persistent allocation, then the pool: only after the context objects are gone.
  ~CudaContextResources();
  CudaContextResources(const CudaContextResources&) = delete;
  CudaContextResources& operator=(const CudaContextResources&) = delete;

  DeviceKind getDeviceKind() const noexcept override { return DeviceKind::kCUDA; }
  int32_t getDeviceIndex() const noexcept override { return device_; }
  void* allocatePersistent(size_t bytes, size_t alignment) noexcept override;
  void* getCublasHandle() noexcept override { return libraries_.cublasOrNull(); }
  void* getCudnnHandle() noexcept override { return libraries_.cudnnOrNull(); }

 private:
  int32_t device_;
  LibraryHandles& libraries_;
  std::mutex mutex_;
  void* pool_ = nullptr;    // cudaMemPool_t, created on the first allocation
  void* stream_ = nullptr;  // the pool's private stream
  std::vector<void*> allocations_;
};

}  // namespace kiln::cuda
