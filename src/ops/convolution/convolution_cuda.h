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

struct ConvGeometry;  // backends/cuda/conv_geometry.h

// patch_gemm's gather (patch_gather.cu): channels-last X of a convolution whose stride is its
// kernel, unpadded, into its patch matrix P [N OH OW, KH KW C] of the same type.
Status launchPatchGather(DataType type, const void* x, void* p, const ConvGeometry& g,
                         const RunContext& ctx);

}  // namespace kiln::cuda
