// Run-time element type -> storage type, for kiln's own CUDA kernels, beside dispatchFloat
// (elements.cuh): each calls f(T{}) with T the storage type and returns false for a type it does
// not cover.
#pragma once

#include <cstdint>

#include "backends/cuda/elements.cuh"

namespace kiln::cuda {

// fp32, fp16, bf16, int32, int64.
template <class F>
bool dispatchFloatOrInt(DataType t, F&& f) {
  switch (t) {
    case DataType::kINT32:
      f(int32_t{});
      return true;
    case DataType::kINT64:
      f(int64_t{});
      return true;
    default:
      return dispatchFloat(t, f);
  }
}

// fp32, fp16, bf16, int32, int64, and bool as uint8_t.
template <class F>
bool dispatchFloatIntOrBool(DataType t, F&& f) {
  if (t == DataType::kBOOL) {
    f(uint8_t{});
    return true;
  }
  return dispatchFloatOrInt(t, f);
}

}  // namespace kiln::cuda
