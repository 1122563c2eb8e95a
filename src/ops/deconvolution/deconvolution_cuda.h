// What deconvolution's two CUDA files share: the validation (deconvolution_cuda.cpp, which also
// holds the tactic list) and kiln's own reference kernel (deconvolution_cuda.cu). Plain C++.
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// True with *g filled when the configuration is one deconvolution's CUDA tactics can run (see
// backends/cuda/float_layer_checks.h), else false with *whyNot prefixed by `tactic`.
bool readDeconvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                       std::string* whyNot);

// kiln's reference: one output element per index (the gather form), every float type, both
// formats.
std::unique_ptr<Kernel> createDeconvolutionReference(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda
