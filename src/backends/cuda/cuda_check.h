// Every CUDA, cuBLAS and cuDNN call is checked; a failure becomes a Status that names the call,
// the source line and the library's own message. Callers add the layer (Status::withContext).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "kiln/status.h"

namespace kiln::cuda {

Status cudaFailure(cudaError_t error, const char* call, const char* file, int line);
Status cublasFailure(cublasStatus_t status, const char* call, const char* file, int line);
Status cudnnFailure(cudnnStatus_t status, const char* call, const char* file, int line);

// After a kernel launch: the launch error, if any (without synchronizing).
Status checkLaunch(const char* kernel, const char* file, int line);

}  // namespace kiln::cuda

#define KILN_CUDA_CHECK(call)                                                        \
  do {                                                                               \
    cudaError_t kiln_cuda_error_ = (call);                                           \
    if (kiln_cuda_error_ != cudaSuccess)                                             \
      return ::kiln::cuda::cudaFailure(kiln_cuda_error_, #call, __FILE__, __LINE__); \
  } while (0)

#define KILN_CUBLAS_CHECK(call)                                                           \
  do {                                                                                    \
    cublasStatus_t kiln_cublas_status_ = (call);                                          \
    if (kiln_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      return ::kiln::cuda::cublasFailure(kiln_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define KILN_CUDNN_CHECK(call)                                                          \
  do {                                                                                  \
    cudnnStatus_t kiln_cudnn_status_ = (call);                                          \
    if (kiln_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                     \
      return ::kiln::cuda::cudnnFailure(kiln_cudnn_status_, #call, __FILE__, __LINE__); \
  } while (0)

// Right after `kernel<<<...>>>(...)`.
#define KILN_CHECK_LAUNCH(name)                                                               \
  do {                                                                                        \
    ::kiln::Status kiln_launch_status_ = ::kiln::cuda::checkLaunch(name, __FILE__, __LINE__); \
    if (!kiln_launch_status_) return kiln_launch_status_;                                     \
  } while (0)
