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
  const Dims& out = c.outputs[0].dims;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));  // out.d[i] > 0 implies in.d[i] > 0
    for (int64_t j = 0; j < out.d[i]; ++j)
      t[static_cast<size_t>(j)] = ops::tile::source(j, in.d[i]);
  }
  return std::make_unique<AxisMapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kTileTactics[] = {{"reference", &createTile}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Tile::cpuTactics() { return cpu::kTileTactics; }

}  // namespace kiln::ops
