// Slice on CUDA. One tactic: "reference", for every data type (one kernel per element size),
// linear tensors only. The rule is slice_semantics.h, shared with the CPU kernel; the kernel is
// an axis map (backends/cuda/axis_map.cuh).
#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/slice/slice_semantics.h"

namespace kiln::cuda {
namespace {

struct SliceRule {
  static constexpr bool kPads = false;
  __host__ __device__ int64_t operator()(const MapAxis& a, int64_t j) const {
    return ops::slice::source(a.start, a.step, j);
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const SliceParams* p = validate<SliceParams>(c, "slice", 1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  for (int32_t i = 0; i < m.rank; ++i) {  // inference proved every read inside the input
    m.axes[i].start = p->starts.d[i];
    m.axes[i].step = p->steps.d[i];
  }
  return makeMapKernel<SliceRule>(m, c.inputs[0].type, "slice");
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Slice::cudaTactics() { return cuda::kTactics; }
