// The CUDA kernel of CropAndResize: DESIGN.md §5 on the device, bit for bit the float32
// operations (and their order) of the CPU kernel in crop_and_resize_cpu.cpp. This header has no
// CUDA include, so the plugin's C++ sources can call it; only crop_and_resize_cuda.cu sees the
// toolkit.
#pragma once

#include <cstddef>
#include <cstdint>
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
// With a workspace and a linear feature map whose C * element size is a multiple of 16
// (fp32: and an output of at least 4x its size), the feature map is first transposed to
// channels-last in the workspace (one coalesced pass), then gathered with 16-byte vectors; without
// one, the linear kernel gathers scalars. `workspace` (device memory, `workspaceBytes` long; may be
// null) is the plugin's enqueue workspace; a null or too small one makes the kernel run without the
// channels-last copy.
std::string cropAndResizeCuda(const CropAndResizeCudaArgs& args, void* workspace,
                              size_t workspaceBytes, void* stream);

// Bytes of device workspace cropAndResizeCuda can use for a feature map of this type, format and
// [n, c, h, w] and an output of `outputElements` (0 where it uses none: channels-last, C *
// element size not a multiple of 16, or fp32 with an output under 4x the feature map's size).
size_t cropAndResizeCudaWorkspaceSize(DataType type, TensorFormat featureFormat, int64_t n,
                                      int64_t c, int64_t h, int64_t w, int64_t outputElements);

// The same for a [N,C,H,W] feature map's desc and the output's desc: what getWorkspaceSize()
// reports and enqueue() hands the kernel (0 for unknown or negative dims).
inline size_t cropAndResizeCudaWorkspaceSize(const PluginTensorDesc& feature,
                                             const PluginTensorDesc& output) {
  if (feature.dims.nbDims != 4 || output.dims.nbDims < 0 || output.dims.nbDims > Dims::kMaxDims)
    return 0;
  for (int32_t i = 0; i < 4; ++i)
    if (feature.dims.d[i] < 0) return 0;
  int64_t outputElements = 1;
  for (int32_t i = 0; i < output.dims.nbDims; ++i)
    if (output.dims.d[i] < 0 ||
        __builtin_mul_overflow(outputElements, output.dims.d[i], &outputElements))
      return 0;
  return cropAndResizeCudaWorkspaceSize(feature.type, feature.format, feature.dims.d[0],
                                        feature.dims.d[1], feature.dims.d[2], feature.dims.d[3],
                                        outputElements);
}

}  // namespace kiln::plugins
