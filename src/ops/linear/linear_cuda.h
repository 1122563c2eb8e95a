// What Linear's two CUDA files share: the geometry, the validation (linear_cuda.cpp, which also
// holds the cuBLASLt tactics and the tactic list) and kiln's own reference kernel
// (linear_cuda.cu). Plain C++ (no CUDA header): the geometry is trivially copyable, so the element
// functor carries it to the device by value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/kernel.h"
#include "kiln/ops/linear.h"

namespace kiln::cuda {

// Y [rows, n] = act(X [rows, k] W [k, n] + bias [n] + residual [rows, n]): X's leading dims
// flattened into rows.
struct LinearGeometry {
  DataType type = DataType::kFLOAT;
  LinearParams p;
  int64_t rows = 0, n = 0, k = 0;
};

// True with *g filled when the configuration is one Linear's CUDA tactics can run (see
// backends/cuda/float_layer_checks.h), else false with *whyNot prefixed by `tactic`.
bool readLinear(const KernelConfig& c, const char* tactic, LinearGeometry* g, std::string* whyNot);

// kiln's reference: one output element per index, every float type.
std::unique_ptr<Kernel> createLinearReference(const KernelConfig& c, std::string* whyNot);

// The cuBLASLt kernel of `g` (inputs X, W, bias, residual in LinearParams' slots): one product
// whose epilogue is the bias and activation where cuBLASLt has that epilogue, else the bias
// epilogue followed by kiln's activation kernel in place on Y; nullptr with *whyNot prefixed by
// `tactic` when cuBLASLt offers no algorithm or the product is empty. Convolution's cublaslt_1x1
// tactic runs through it too: a 1x1 convolution over channels-last tensors is this product.
std::unique_ptr<Kernel> createLinearCublasLt(const LinearGeometry& g, const char* tactic,
                                             std::string* whyNot);

// The "cudnn_graph_fused" tactics (linear_cudnn_graph_cuda.cpp): the product and its epilogue as
// one cuDNN operation graph (runtime fusion), the engine of rank `rank` among the heuristic's
// usable ones; FP16, a product with a bias, residual or activation that cuDNN has (the erf GELU
// among them, which cuBLASLt's epilogue is not).
std::unique_ptr<Kernel> createLinearCudnnGraph(const KernelConfig& c, int rank, const char* tactic,
                                               std::string* whyNot);

}  // namespace kiln::cuda
