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
  const SliceParams* p = validate<SliceParams>(c, "slice", -1, &ops::Slice::infer, whyNot);
  if (!p || !allLinear(c, "slice", whyNot)) return nullptr;
  const Dims& in = c.inputs[0].dims;
  return makeAxisMapKernel(in, c.outputs[0].dims, c.inputs[0].type, [&](int32_t i, int64_t j) {
    const int64_t start = p->startOn(i, in.d[i]);
    return ops::slice::source(start, p->steps.d[i], j);
  });
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Slice::cpuTactics() { return cpu::kTactics; }
