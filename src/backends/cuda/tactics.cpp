// Each op's CUDA tactics, from the family that holds its kernels.
#include "backends/cuda/kernel.h"
#include "ops/op.h"

namespace kiln {
namespace cuda {
namespace {

std::span<const Tactic> familyTactics(LayerType type) {
  for (auto family : {dataMovementTactics, mathTactics, denseTactics}) {
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
KILN_BUILTIN_OPS(KILN_CUDA_FAMILY_TACTICS)
#undef KILN_CUDA_FAMILY_TACTICS

}  // namespace kiln
