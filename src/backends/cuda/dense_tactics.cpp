// Tactic lists of the dense family (placeholder until its kernels land).
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

std::span<const Tactic> denseTactics(LayerType) { return {}; }

}  // namespace kiln::cuda
