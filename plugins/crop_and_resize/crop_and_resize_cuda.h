// The CUDA kernel of CropAndResize: DESIGN.md §5 on the device, bit for bit the float32
// operations (and their order) of the CPU kernel in crop_and_resize_cpu.cpp. This header has no
// CUDA include, so the plugin's C++ sources can call it; only crop_and_resize_cuda.cu sees the
// toolkit.
#pragma once

#include <string>

#include "crop_and_resize_cpu.h"

namespace kiln::plugins {

// The same description as the CPU kernel's, with every pointer in device memory of the current
// device. Box indices outside [0, N) give extrapolation_value without any read; they are not
// reported (that would need a synchronisation).
using CropAndResizeCudaArgs = CropAndResizeCpuArgs;

// Enqueues the kernel on `stream` (a cudaStream_t; nullptr is the legacy default stream).
// Asynchronous: no allocation, no synchronisation, so it can be captured in a CUDA graph.
// A zero-size output launches nothing. Returns "" on success, else what went wrong (an argument
// the kernel cannot take, or the launch error from cudaGetLastError).
std::string cropAndResizeCuda(const CropAndResizeCudaArgs& args, void* stream);

}  // namespace kiln::plugins
