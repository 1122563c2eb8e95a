// Expand on the CPU, one tactic: "reference", for every data type. It only repeats input
// elements: the output coordinate c on an axis reads c, or 0 where the input dim is 1 (numpy
// broadcasting, trailing dims aligned): expand_semantics.h, shared with the CUDA kernel.
#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/expand/expand_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

KernelPtr createExpand(const KernelConfig& c, std::string* whyNot) {
  const ExpandParams* p = validate<ExpandParams>(c, "expand", -1, &ops::Expand::infer, whyNot);
  if (!p || !allLinear(c, "expand", whyNot)) return nullptr;
  const Dims& out = c.outputs[0].dims;
  const Dims in = ops::expand::alignedInput(c.inputs[0].dims, out.nbDims);
  return makeAxisMapKernel(in, out, c.inputs[0].type,
                           [&](int32_t i, int64_t j) { return ops::expand::source(j, in.d[i]); });
}

constexpr Tactic kTactics[] = {{"reference", &createExpand}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Expand::cpuTactics() { return cpu::kTactics; }
