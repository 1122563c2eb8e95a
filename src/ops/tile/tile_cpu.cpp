// Tile on the CPU, one tactic: "reference", for every data type. It only repeats input elements:
// the output coordinate c on an axis of n reads c mod n (tile_semantics.h, shared with the CUDA
// kernel).
#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/tile/tile_semantics.h"

namespace kiln::cpu {
namespace {

KernelPtr createTile(const KernelConfig& c, std::string* whyNot) {
  const TileParams* p = validate<TileParams>(c, "tile", 1, &ops::Tile::infer, whyNot);
  if (!p || !allLinear(c, "tile", whyNot)) return nullptr;
  const Dims& in = c.inputs[0].dims;
  // Only called for j < out.d[i], and out.d[i] > 0 implies in.d[i] > 0.
  return makeAxisMapKernel(in, c.outputs[0].dims, c.inputs[0].type,
                           [&](int32_t i, int64_t j) { return ops::tile::source(j, in.d[i]); });
}

constexpr Tactic kTactics[] = {{"reference", &createTile}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Tile::cpuTactics() { return cpu::kTactics; }
