// Slice on the CPU: output element j of axis i reads input element start[i] + j*step[i]
// (slice_semantics.h, shared with the CUDA kernel). One tactic: "reference", for every data type
// (it moves elements). Inference has proved every read index inside the input, so the tables
// below are in range.
#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/slice/slice_semantics.h"

namespace kiln::cpu {
namespace {

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const SliceParams* p = validate<SliceParams>(c, "slice", 1, &ops::Slice::infer, whyNot);
  if (!p || !allLinear(c, "slice", whyNot)) return nullptr;
  const Dims& out = c.outputs[0].dims;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(out.nbDims));
  for (int32_t i = 0; i < out.nbDims; ++i) {
    auto& t = tables[static_cast<size_t>(i)];
    t.resize(static_cast<size_t>(out.d[i]));
    for (int64_t j = 0; j < out.d[i]; ++j)
      t[static_cast<size_t>(j)] = ops::slice::source(p->starts.d[i], p->steps.d[i], j);
  }
  return std::make_unique<AxisMapKernel>(
      AxisMap(c.inputs[0].dims, out, std::move(tables), dataTypeSize(c.inputs[0].type)));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

}  // namespace kiln::cpu

namespace kiln::ops {

std::span<const Tactic> Slice::cpuTactics() { return cpu::kTactics; }

}  // namespace kiln::ops
