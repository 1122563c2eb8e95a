// The float types the cuBLAS tactics of matrix multiply and gemm take (src/ops/<op>/<op>_cuda.cpp)
// and how cuBLAS names them. FP32 and FP16 only: BF16 is left to kiln's reference kernels.
#pragma once

#include <library_types.h>

#include <string>

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

}  // namespace kiln::cuda
