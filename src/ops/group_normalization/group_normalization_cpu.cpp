// GroupNormalization on the CPU, one tactic: "reference", row (sample and group) by row, linear
// tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one type; fp16 and bf16 convert through
// backends/cpu/float_elements.h). The arithmetic, FP32 and two-pass whatever the storage, is
// group_normalization_semantics.h, which the CUDA kernels run too. The 16-bit types are taken
// here, as LayerNormalization's are, so that a half network keeps its bytes and the FP32
// statistics can be tested on the host.
#include <string>

#include "ops/group_normalization/group_normalization_semantics.h"
#include "ops/op.h"
#include "ops/row_normalization_cpu.h"

namespace kiln::cpu {
namespace {

namespace gn = ops::group_normalization;

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = row_normalization::validate<GroupNormalizationParams>(
      c, "group_normalization", 3, &ops::GroupNormalization::infer, "Scale and B", whyNot);
  if (!p) return nullptr;
  return row_normalization::makeKernel<gn::StoredRow>(
      c, "group_normalization", gn::groupGeometry(p->numGroups, p->epsilon, c.inputs[0].dims));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::GroupNormalization::cpuTactics() { return cpu::kTactics; }
