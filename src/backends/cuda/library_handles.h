// cuBLAS and cuDNN handles owned by one execution context (or one builder session). Each is
// created on first request, so a context whose layers and plugins never ask pays nothing, and is
// bound to the stream of the run that uses it.
#pragma once

#include <mutex>

#include "backends/cuda/non_copyable.h"
#include "kiln/status.h"

namespace kiln::cuda {

class LibraryHandles : NonCopyable {
 public:
  ~LibraryHandles();

  // The handle (cublasHandle_t / cudnnHandle_t as void*), created if needed and set to `stream`.
  Status cublas(void* stream, void*& handle);
  Status cudnn(void* stream, void*& handle);
  // Creates both now (a context does this when a kernel uses them, before any capture).
  Status createAll();
  // For plugins (IPluginContextResources): created if needed, nullptr on failure.
  void* cublasOrNull() noexcept;
  void* cudnnOrNull() noexcept;

 private:
  Status ensureCublas();
  Status ensureCudnn();
  std::mutex mutex_;  // plugins may ask from attachToContext on another thread than enqueue
  void* cublas_ = nullptr;
  void* cudnn_ = nullptr;
};

}  // namespace kiln::cuda
