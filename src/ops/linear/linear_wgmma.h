// Linear's own Hopper tactics (linear_wgmma_sm90a.cu): the product on the warpgroup tensor cores
// (wgmma, fed by the tensor memory accelerator) with kiln's epilogue applied to the FP32
// accumulators in registers, so that an activation cuBLASLt has no epilogue for (the erf GELU of
// a transformer's MLP) costs no second pass over Y. Plain C++ (no CUDA header).
#pragma once

#include <memory>
#include <string>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// The kernel for a Linear configuration with output tiles of 128 rows by `tileN` (128 or 256)
// columns, or nullptr with *whyNot prefixed by `tactic`: FP16/BF16 only, K and N multiples of 8
// (the tensor memory accelerator's 16-byte row strides), and a GPU of compute capability 9.0 where
// there is one (the kernels are sm_90a code).
std::unique_ptr<Kernel> createLinearWgmma(const KernelConfig& c, int tileN, const char* tactic,
                                          std::string* whyNot);

}  // namespace kiln::cuda
