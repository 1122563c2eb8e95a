// Tile on CUDA. One tactic: "reference", for every data type (one kernel per element size),
// linear tensors only. The rule is tile_semantics.h, shared with the CPU kernel; the kernel is
// an axis map (backends/cuda/axis_map.cuh).
#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/tile/tile_semantics.h"

namespace kiln::cuda {
namespace {

struct TileRule {
  static constexpr bool kPads = false;
  __host__ __device__ int64_t operator()(const MapAxis& a, int64_t j) const {
    return ops::tile::source(j, a.inDim);  // out > 0 implies in > 0
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const TileParams* p = validate<TileParams>(c, "tile", 1, true, whyNot);
  if (!p) return nullptr;
  const AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  return makeMapKernel<TileRule>(m, c.inputs[0].type, "tile");
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Tile::cudaTactics() { return cuda::kTactics; }
