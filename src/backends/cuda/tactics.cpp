// The CUDA tactics of the ops whose kernels still live in a family of src/backends/cuda/ (listed
// below); every other op defines cudaTactics() in its own unit, src/ops/<op>/*_cuda.*.
#include "backends/cuda/kernel.h"
#include "ops/op.h"

namespace kiln {
namespace cuda {
namespace {

std::span<const Tactic> familyTactics(LayerType type) {
  for (auto family : {mathTactics, denseTactics}) {
    std::span<const Tactic> list = family(type);
    if (!list.empty()) return list;
  }
  return {};
}

}  // namespace
}  // namespace cuda

// X(ENUM, VALUE, Name) as in KILN_BUILTIN_OPS (kiln/op_list.h), one line per op served by a
// family.
#define KILN_CUDA_FAMILY_OPS(X)         \
  X(CONVOLUTION, 1, Convolution)        \
  X(POOLING, 2, Pooling)                \
  X(ELEMENTWISE, 3, Elementwise)        \
  X(ACTIVATION, 4, Activation)          \
  X(MATRIX_MULTIPLY, 5, MatrixMultiply) \
  X(GEMM, 6, Gemm)                      \
  X(SOFTMAX, 7, Softmax)                \
  X(REDUCE, 10, Reduce)                 \
  X(DECONVOLUTION, 20, Deconvolution)   \
  X(NORMALIZATION, 21, Normalization)   \
  X(LRN, 22, LRN)

#define KILN_CUDA_FAMILY_TACTICS(ENUM, VALUE, NAME)  \
  std::span<const Tactic> ops::NAME::cudaTactics() { \
    return cuda::familyTactics(LayerType::k##ENUM);  \
  }
KILN_CUDA_FAMILY_OPS(KILN_CUDA_FAMILY_TACTICS)
#undef KILN_CUDA_FAMILY_TACTICS
#undef KILN_CUDA_FAMILY_OPS

}  // namespace kiln
