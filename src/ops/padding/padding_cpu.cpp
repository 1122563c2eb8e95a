// Padding on the CPU (ONNX Pad), one tactic: "reference", for every data type. Modes: constant
// (the value converted to the tensor's type), reflect (mirror without repeating the edge, as
// numpy's "reflect") and edge (repeat the border element): padding_semantics.h, shared with the
// CUDA kernel.
#include "backends/cpu/axis_map.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/padding/padding_semantics.h"

namespace kiln::cpu {
namespace {

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const PaddingParams* p = validate<PaddingParams>(c, "padding", 1, &ops::Padding::infer, whyNot);
  if (!p || !allLinear(c, "padding", whyNot)) return nullptr;
  const Dims& in = c.inputs[0].dims;
  const DataType type = c.inputs[0].type;
  return makeAxisMapKernel(
      in, c.outputs[0].dims, type,
      [&](int32_t i, int64_t j) { return ops::padding::source(p->mode, j, p->before[i], in.d[i]); },
      ops::padding::fillBits(p->value, type));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Padding::cpuTactics() { return cpu::kTactics; }
