// Tactic lists of the math family (placeholder until its kernels land).
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

std::span<const Tactic> mathTactics(LayerType) { return {}; }

}  // namespace kiln::cuda
