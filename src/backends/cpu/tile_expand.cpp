// Tile and expand on the CPU, one tactic each: "reference", for every data type. Both only
// repeat input elements: tile's output coordinate c on an axis of n reads c mod n; expand's reads
// c, or 0 where the input dim is 1 (numpy broadcasting, trailing dims aligned).
#include "backends/cpu/axis_map.h"
#include "backends/cpu/light_kernel_util.h"

namespace kiln::cpu {
namespace {

class MapKernel final : public Kernel {
 public:
  explicit MapKernel(AxisMap map) : map_(std::move(map)) {}
  Status run(const void* const* in, void* const* out, void*) const override {
    map_.run(in[0], out[0]);
    return Status::ok();
  }

 private:
  AxisMap map_;
};

std::unique_ptr<Kernel> createTile(const KernelConfig& c, std::string* whyNot) {
  const TileParams* p = light::validate<TileParams>(c, "tile", 1, &inferTile, whyNot);
  if (!p || !light::allLinear(c, "tile", whyNot)) return nullptr;
  const Dims& in = c.inputs[0].dims;
  const Dims& out = c.outputs[0].dims;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));  // out.d[i] > 0 implies in.d[i] > 0
    for (int64_t j = 0; j < out.d[i]; ++j) t[static_cast<size_t>(j)] = j % in.d[i];
  }
  return std::make_unique<MapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

std::unique_ptr<Kernel> createExpand(const KernelConfig& c, std::string* whyNot) {
  const ExpandParams* p = light::validate<ExpandParams>(c, "expand", 1, &inferExpand, whyNot);
  if (!p || !light::allLinear(c, "expand", whyNot)) return nullptr;
  const Dims& out = c.outputs[0].dims;
  // The input seen at the output's rank: leading 1s where it has fewer dims.
  Dims in;
  in.nbDims = out.nbDims;
  const int32_t lead = out.nbDims - c.inputs[0].dims.nbDims;
  for (int32_t i = 0; i < out.nbDims; ++i) in.d[i] = i < lead ? 1 : c.inputs[0].dims.d[i - lead];
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));
    for (int64_t j = 0; j < out.d[i]; ++j) t[static_cast<size_t>(j)] = in.d[i] == 1 ? 0 : j;
  }
  return std::make_unique<MapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kTileTactics[] = {{"reference", &createTile}};
constexpr Tactic kExpandTactics[] = {{"reference", &createExpand}};

}  // namespace

std::span<const Tactic> tileTactics() { return kTileTactics; }
std::span<const Tactic> expandTactics() { return kExpandTactics; }

}  // namespace kiln::cpu
