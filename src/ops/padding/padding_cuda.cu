// Padding on CUDA (ONNX Pad). One tactic: "reference", for every data type (one kernel per
// element size), linear tensors only. Modes and the constant value's bits are
// padding_semantics.h, shared with the CPU kernel; the kernel is an axis map
// (backends/cuda/axis_map.cuh).
#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/padding/padding_semantics.h"

namespace kiln::cuda {
namespace {

// One kernel per mode: only the constant mode ever reads the fill value.
template <PaddingMode kMode>
struct PadRule {
  static constexpr bool kPads = kMode == PaddingMode::kCONSTANT;
  __host__ __device__ int64_t operator()(const MapAxis& a, int64_t j) const {
    return ops::padding::source(kMode, j, a.before, a.inDim);
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const PaddingParams* p = validate<PaddingParams>(c, "padding", 1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  for (int32_t i = 0; i < m.rank; ++i) m.axes[i].before = p->before[i];
  const DataType type = c.inputs[0].type;
  m.fill = ops::padding::fillBits(p->value, type);
  switch (p->mode) {
    case PaddingMode::kREFLECT:
      return makeMapKernel<PadRule<PaddingMode::kREFLECT>>(m, type, "padding");
    case PaddingMode::kEDGE:
      return makeMapKernel<PadRule<PaddingMode::kEDGE>>(m, type, "padding");
    default:  // kCONSTANT (inference has validated the mode)
      return makeMapKernel<PadRule<PaddingMode::kCONSTANT>>(m, type, "padding");
  }
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Padding::cudaTactics() { return cuda::kTactics; }
