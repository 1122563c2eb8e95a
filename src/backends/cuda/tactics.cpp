// The CUDA tactics of the ops whose kernels still live in a family of src/backends/cuda/; every
// other op defines cudaTactics() in its unit (src/ops/<op>/<op>_cuda.*).
#include "backends/cuda/kernel.h"
#include "ops/op.h"

namespace kiln {

#define KILN_CUDA_FAMILY_TACTICS(ENUM, NAME)              \
  std::span<const Tactic> ops::NAME::cudaTactics() {      \
    return cuda::dataMovementTactics(LayerType::k##ENUM); \
  }
// The data-movement family, one line per op.
KILN_CUDA_FAMILY_TACTICS(CONCATENATION, Concatenation)
KILN_CUDA_FAMILY_TACTICS(SHUFFLE, Shuffle)
KILN_CUDA_FAMILY_TACTICS(REFORMAT, Reformat)
KILN_CUDA_FAMILY_TACTICS(SELECT, Select)
KILN_CUDA_FAMILY_TACTICS(GATHER, Gather)
KILN_CUDA_FAMILY_TACTICS(SLICE, Slice)
KILN_CUDA_FAMILY_TACTICS(PADDING, Padding)
KILN_CUDA_FAMILY_TACTICS(RESIZE, Resize)
KILN_CUDA_FAMILY_TACTICS(TILE, Tile)
KILN_CUDA_FAMILY_TACTICS(EXPAND, Expand)
KILN_CUDA_FAMILY_TACTICS(ROI_ALIGN, RoiAlign)
#undef KILN_CUDA_FAMILY_TACTICS

}  // namespace kiln
