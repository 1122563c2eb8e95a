// The CUDA tactics of the ops whose kernels still live in a family of src/backends/cuda/; every
// other op defines cudaTactics() in its unit (src/ops/<op>/<op>_cuda.*).
#include "backends/cuda/kernel.h"
#include "ops/op.h"

namespace kiln {
namespace cuda {
namespace {

std::span<const Tactic> familyTactics(LayerType type) {
  for (auto family : {dataMovementTactics, denseTactics}) {
    std::span<const Tactic> list = family(type);
    if (!list.empty()) return list;
  }
  return {};
}

}  // namespace
}  // namespace cuda

#define KILN_CUDA_FAMILY_TACTICS(ENUM, VALUE, NAME)  \
  std::span<const Tactic> ops::NAME::cudaTactics() { \
    return cuda::familyTactics(LayerType::k##ENUM);  \
  }
// Dense family.
KILN_CUDA_FAMILY_TACTICS(CONVOLUTION, 1, Convolution)
KILN_CUDA_FAMILY_TACTICS(POOLING, 2, Pooling)
KILN_CUDA_FAMILY_TACTICS(MATRIX_MULTIPLY, 5, MatrixMultiply)
KILN_CUDA_FAMILY_TACTICS(GEMM, 6, Gemm)
KILN_CUDA_FAMILY_TACTICS(DECONVOLUTION, 20, Deconvolution)
// Data-movement family.
KILN_CUDA_FAMILY_TACTICS(CONCATENATION, 8, Concatenation)
KILN_CUDA_FAMILY_TACTICS(SHUFFLE, 9, Shuffle)
KILN_CUDA_FAMILY_TACTICS(REFORMAT, 12, Reformat)
KILN_CUDA_FAMILY_TACTICS(SELECT, 13, Select)
KILN_CUDA_FAMILY_TACTICS(GATHER, 14, Gather)
KILN_CUDA_FAMILY_TACTICS(SLICE, 15, Slice)
KILN_CUDA_FAMILY_TACTICS(PADDING, 16, Padding)
KILN_CUDA_FAMILY_TACTICS(RESIZE, 17, Resize)
KILN_CUDA_FAMILY_TACTICS(TILE, 18, Tile)
KILN_CUDA_FAMILY_TACTICS(EXPAND, 19, Expand)
KILN_CUDA_FAMILY_TACTICS(ROI_ALIGN, 23, RoiAlign)
#undef KILN_CUDA_FAMILY_TACTICS

}  // namespace kiln
