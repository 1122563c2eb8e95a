#include "backends/cuda/library_handles.h"

#include "backends/cuda/cuda_check.h"

namespace kiln::cuda {

LibraryHandles::~LibraryHandles() {
  if (cublas_) cublasDestroy(static_cast<cublasHandle_t>(cublas_));
  if (cudnn_) cudnnDestroy(static_cast<cudnnHandle_t>(cudnn_));
}

Status LibraryHandles::ensureCublas() {
  if (cublas_) return Status::ok();
  cublasHandle_t h = nullptr;
  KILN_CUBLAS_CHECK(cublasCreate(&h));
  // FP32 stays FP32: no TF32 tensor-core shortcut, so results match the CPU reference.
  cublasStatus_t mode = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  if (mode != CUBLAS_STATUS_SUCCESS) {
    cublasDestroy(h);
    return cublasFailure(mode, "cublasSetMathMode", __FILE__, __LINE__);
  }
  cublas_ = h;
  return Status::ok();
}

Status LibraryHandles::ensureCudnn() {
  if (cudnn_) return Status::ok();
  cudnnHandle_t h = nullptr;
  KILN_CUDNN_CHECK(cudnnCreate(&h));
  cudnn_ = h;
  return Status::ok();
}

Status LibraryHandles::cublas(void* stream, void*& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_RETURN_IF_ERROR(ensureCublas());
  // Set only when it changed: every layer of an enqueue asks with the same stream, and the setter
  // costs host time on each (a plugin may have bound the handle to another stream meanwhile, so
  // the handle's own stream is compared, not a remembered one).
  const auto h = static_cast<cublasHandle_t>(cublas_);
  cudaStream_t current = nullptr;
  if (cublasGetStream(h, &current) != CUBLAS_STATUS_SUCCESS || current != stream)
    KILN_CUBLAS_CHECK(cublasSetStream(h, static_cast<cudaStream_t>(stream)));
  handle = cublas_;
  return Status::ok();
}

Status LibraryHandles::cudnn(void* stream, void*& handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_RETURN_IF_ERROR(ensureCudnn());
  const auto h = static_cast<cudnnHandle_t>(cudnn_);  // as for cuBLAS above
  cudaStream_t current = nullptr;
  if (cudnnGetStream(h, &current) != CUDNN_STATUS_SUCCESS || current != stream)
    KILN_CUDNN_CHECK(cudnnSetStream(h, static_cast<cudaStream_t>(stream)));
  handle = cudnn_;
  return Status::ok();
}

Status LibraryHandles::createAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  KILN_RETURN_IF_ERROR(ensureCublas());
  return ensureCudnn();
}

void* LibraryHandles::cublasOrNull() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return ensureCublas() ? cublas_ : nullptr;
}

void* LibraryHandles::cudnnOrNull() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return ensureCudnn() ? cudnn_ : nullptr;
}

}  // namespace kiln::cuda
