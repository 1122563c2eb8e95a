// Expand on the CPU, one tactic: "reference", for every data type. It only repeats input
// elements: the output coordinate c on an axis reads c, or 0 where the input dim is 1 (numpy
// broadcasting, trailing dims aligned).
#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

KernelPtr createExpand(const KernelConfig& c, std::string* whyNot) {
  const ExpandParams* p = validate<ExpandParams>(c, "expand", 1, &ops::Expand::infer, whyNot);
  if (!p || !allLinear(c, "expand", whyNot)) return nullptr;
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
  return std::make_unique<AxisMapKernel>(
      AxisMap(in, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kExpandTactics[] = {{"reference", &createExpand}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Expand::cpuTactics() { return cpu::kExpandTactics; }

}  // namespace kiln::ops
