// LayerNormalization on the CPU: "split", the rows over the CPU thread pool (bitwise the
// reference's results), where there are at least two; "reference", row by row, linear tensors of
// fp32, fp16 or bf16 (X, Scale, B and Y of one type; fp16 and bf16 convert through
// backends/cpu/float_elements.h). The arithmetic, FP32 and two-pass whatever the storage, is
// layer_normalization_semantics.h, which the CUDA kernels run too. The 16-bit types are taken here,
// unlike most CPU float kernels, so that a half network keeps its bytes and the FP32 statistics can
// be tested on the host.
#include <string>

#include "ops/layer_normalization/layer_normalization_semantics.h"
#include "ops/op.h"
#include "ops/row_normalization_cpu.h"

namespace kiln::cpu {
namespace {

namespace ln = ops::layer_normalization;

KernelPtr create(const KernelConfig& c, bool split, std::string* whyNot) {
  const auto* p = row_normalization::validate<LayerNormalizationParams>(
      c, "layer_normalization", -1, &ops::LayerNormalization::infer, "Scale and B", whyNot);
  if (!p) return nullptr;
  const auto g = ln::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims,
                                 c.inputs.size() == 3 ? &c.inputs[2].dims : nullptr);
  if (split && g.rows < 2) {
    setWhyNot(whyNot, "layer_normalization: split: one row, nothing to split");
    return nullptr;
  }
  return row_normalization::makeKernel<ln::StoredRow>(c, "layer_normalization", g, split);
}

KernelPtr createSplit(const KernelConfig& c, std::string* whyNot) {
  return create(c, true, whyNot);
}
KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  return create(c, false, whyNot);
}

constexpr Tactic kTactics[] = {{"split", &createSplit}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::LayerNormalization::cpuTactics() { return cpu::kTactics; }
