// RMSNormalization on the CPU, one tactic: "reference", row by row, linear tensors of fp32, fp16
// or bf16 (X, Scale and Y of one type; fp16 and bf16 convert through
// backends/cpu/float_elements.h). The arithmetic, FP32 whatever the storage, is
// rms_normalization_semantics.h, which the CUDA kernels run too. The 16-bit types are taken here,
// as LayerNormalization's are, so that a half network keeps its bytes and the FP32 sum of squares
// can be tested on the host.
#include <string>

#include "ops/op.h"
#include "ops/rms_normalization/rms_normalization_semantics.h"
#include "ops/row_normalization_cpu.h"

namespace kiln::cpu {
namespace {

namespace rms = ops::rms_normalization;

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = row_normalization::validate<RMSNormalizationParams>(
      c, "rms_normalization", 2, &ops::RMSNormalization::infer, "Scale", whyNot);
  if (!p) return nullptr;
  return row_normalization::makeKernel<rms::StoredRow>(
      c, "rms_normalization",
      rms::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::RMSNormalization::cpuTactics() { return cpu::kTactics; }
