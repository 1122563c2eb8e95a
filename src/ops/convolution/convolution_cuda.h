// Convolution's own kernels (convolution_cuda.cu, patch_gather.cu), for the tactic list
// (convolution_cuda.cpp).
// Plain C++.
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// kiln's reference: one output element per index, every float type, both formats.
std::unique_ptr<Kernel> createConvolutionReference(const KernelConfig& c, std::string* whyNot);

// depthwise_vectorized: a 3x3 depthwise convolution over channels-last tensors whose channels are
// a multiple of the 16-byte vector (convolution_cuda.cu), every float type.
std::unique_ptr<Kernel> createDepthwiseVectorized(const KernelConfig& c, std::string* whyNot);

struct ConvGeometry;  // backends/cuda/conv_geometry.h

// patch_gemm's gather (patch_gather.cu): channels-last X of a convolution whose stride is its
// kernel, unpadded, into its patch matrix P [N OH OW, KH KW C] of the same type.
Status launchPatchGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                         const RunContext& ctx);

// im2col_gemm's gather (patch_gather.cu): rows [rowBegin, rowBegin + rows) of the patch matrix P
// [N OH OW, columns] of an ungrouped convolution over channels-last X, column (ky, kx, c), zero
// in the padding and past KH KW C; `columns` a multiple of 8, rows and columns below 2^31.
Status launchIm2colGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                          int64_t columns, int64_t rowBegin, int64_t rows, const RunContext& ctx);

}  // namespace kiln::cuda
