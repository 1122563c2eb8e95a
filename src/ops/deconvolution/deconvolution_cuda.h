// Deconvolution's reference kernel (deconvolution_cuda.cu), for the tactic list
// (deconvolution_cuda.cpp). Plain C++.
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// kiln's reference: one output element per index (the gather form), every float type, both
// formats.
std::unique_ptr<Kernel> createDeconvolutionReference(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda
