// Tactic lists of the data_movement family (placeholder until its kernels land).
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

std::span<const Tactic> dataMovementTactics(LayerType) { return {}; }

}  // namespace kiln::cuda
