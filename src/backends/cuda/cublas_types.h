// What the cuBLAS tactics of matrix multiply and gemm (src/ops/<op>/<op>_cuda.cpp) share: the
// float types they take and how cuBLAS names them (FP32 and FP16 only: BF16 is left to kiln's
// reference kernels), and the run's handle.
#pragma once

#include <cublas_v2.h>
#include <library_types.h>

#include <string>

#include "backends/cuda/kernel.h"
#include "backends/cuda/library_handles.h"
#include "kiln/types.h"

namespace kiln::cuda {

// cuBLAS's name for a type that cublasSupportsType accepted.
inline cudaDataType_t cublasDataType(DataType t) {
  return t == DataType::kFLOAT ? CUDA_R_32F : CUDA_R_16F;
}

// True for FP32 and FP16, else false with *whyNot.
inline bool cublasSupportsType(DataType t, std::string* whyNot) {
  if (t == DataType::kFLOAT || t == DataType::kHALF) return true;
  if (whyNot) *whyNot = std::string("cublas: fp32 and fp16 only, got ") + dataTypeName(t);
  return false;
}

// The run's cuBLAS handle, bound to its stream; kUnsupported under RunContext::emulate.
inline Status cublasHandleFor(const RunContext& ctx, cublasHandle_t& handle) {
  if (ctx.emulate) return unsupported("cuBLAS needs a GPU");
  void* h = nullptr;
  KILN_RETURN_IF_ERROR(ctx.libraries->cublas(ctx.stream, h));
  handle = static_cast<cublasHandle_t>(h);
  return Status::ok();
}

}  // namespace kiln::cuda
