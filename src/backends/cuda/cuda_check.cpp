#include "backends/cuda/cuda_check.h"

namespace kiln::cuda {
namespace {

std::string where(const char* call, const char* file, int line) {
  std::string f = file;
  const size_t slash = f.rfind("src/");
  if (slash != std::string::npos) f = f.substr(slash);
  return std::string(call) + " (" + f + ":" + std::to_string(line) + ")";
}

}  // namespace

Status cudaFailure(cudaError_t error, const char* call, const char* file, int line) {
  return deviceError(where(call, file, line) + " failed: " + cudaGetErrorName(error) + ": " +
                     cudaGetErrorString(error));
}

Status cublasFailure(cublasStatus_t status, const char* call, const char* file, int line) {
  return deviceError(where(call, file, line) + " failed: " + cublasGetStatusName(status) + ": " +
                     cublasGetStatusString(status));
}

Status cudnnFailure(cudnnStatus_t status, const char* call, const char* file, int line) {
  return deviceError(where(call, file, line) + " failed: " + cudnnGetErrorString(status));
}

Status checkLaunch(const char* kernel, const char* file, int line) {
  const cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) return Status::ok();
  return cudaFailure(error, (std::string("launch of kernel ") + kernel).c_str(), file, line);
}

}  // namespace kiln::cuda
