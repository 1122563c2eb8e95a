// Each op's CUDA tactics, from the family that holds its kernels.
#include "backends/cuda/kernel.h"
#include "ops/op.h"

namespace kiln {
namespace cuda {
namespace {

std::span<const Tactic> familyTactics(LayerType type) {
  for (auto family : {dataMovementTactics, mathTactics}) {
    std::span<const Tactic> list = family(type);
    if (!list.empty()) return list;
  }
  return {};
}

}  // namespace
}  // namespace cuda

#define KILN_CUDA_FAMILY_TACTICS(ENUM, NAME)         \
  std::span<const Tactic> ops::NAME::cudaTactics() { \
    return cuda::familyTactics(LayerType::k##ENUM);  \
  }
// The ops still served by a family, one line each (an op whose unit defines its own cudaTactics(),
// such as Convolution in src/ops/convolution/convolution_cuda.cpp, is not listed).
KILN_CUDA_FAMILY_TACTICS(ELEMENTWISE, Elementwise)
KILN_CUDA_FAMILY_TACTICS(ACTIVATION, Activation)
KILN_CUDA_FAMILY_TACTICS(SOFTMAX, Softmax)
KILN_CUDA_FAMILY_TACTICS(CONCATENATION, Concatenation)
KILN_CUDA_FAMILY_TACTICS(SHUFFLE, Shuffle)
KILN_CUDA_FAMILY_TACTICS(REDUCE, Reduce)
KILN_CUDA_FAMILY_TACTICS(REFORMAT, Reformat)
KILN_CUDA_FAMILY_TACTICS(SELECT, Select)
KILN_CUDA_FAMILY_TACTICS(GATHER, Gather)
KILN_CUDA_FAMILY_TACTICS(SLICE, Slice)
KILN_CUDA_FAMILY_TACTICS(PADDING, Padding)
KILN_CUDA_FAMILY_TACTICS(RESIZE, Resize)
KILN_CUDA_FAMILY_TACTICS(TILE, Tile)
KILN_CUDA_FAMILY_TACTICS(EXPAND, Expand)
KILN_CUDA_FAMILY_TACTICS(NORMALIZATION, Normalization)
KILN_CUDA_FAMILY_TACTICS(LRN, LRN)
KILN_CUDA_FAMILY_TACTICS(ROI_ALIGN, RoiAlign)
#undef KILN_CUDA_FAMILY_TACTICS

}  // namespace kiln
