// Convolution's reference kernel (convolution_cuda.cu), for the tactic list (convolution_cuda.cpp).
// Plain C++.
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// kiln's reference: one output element per index, every float type, both formats.
std::unique_ptr<Kernel> createConvolutionReference(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda
