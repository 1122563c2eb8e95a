// ScaleBias's CUDA path: compiled only when the build finds CUDA (KILN_EXAMPLE_CUDA). The header
// is plain C++ so that scale_bias_plugin.cpp needs no CUDA headers.
#pragma once

#include <cstdint>

namespace kiln_example {

// y[i] = x[i] * scale + bias for n elements on `stream` (a cudaStream_t), fp32 or, when `half`,
// fp16 (FP32 arithmetic, rounded to nearest even once). Returns 0, or a CUDA error code from the
// launch. Asynchronous: never synchronizes, so it can be captured in a CUDA graph.
int32_t launchScaleBias(const void* x, void* y, int64_t n, float scale, float bias, bool half,
                        void* stream) noexcept;

// The CUDA runtime's name for an error code returned by launchScaleBias().
const char* scaleBiasCudaErrorName(int32_t code) noexcept;

}  // namespace kiln_example
