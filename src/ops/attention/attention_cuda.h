// Attention's CUDA tactics that live outside attention_cuda.cu (host code, no kernels of kiln's
// own), and what they borrow from it.
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda::attention {

// attention_cuda.cu: flash_mma_8w, or unfused_cublas where it declines: the kernel a library
// tactic runs for a call whose buffers are not aligned as its library plan assumed (a user's
// binding may be anywhere; the plan is made for the builder's aligned tensors).
std::unique_ptr<Kernel> createUnalignedFallback(const KernelConfig& c, std::string* whyNot);

// attention_cudnn_cuda.cpp: "cudnn_sdpa", cuDNN's fused scaled dot-product attention.
std::unique_ptr<Kernel> createCudnnSdpa(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda::attention
