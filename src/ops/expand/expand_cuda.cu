// Expand on CUDA. One tactic: "reference", for every data type (one kernel per element size),
// linear tensors only. The broadcasting rules are expand_semantics.h, shared with the CPU kernel;
// the kernel is an axis map (backends/cuda/axis_map.cuh).
#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/expand/expand_semantics.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

struct ExpandRule {
  static constexpr bool kPads = false;
  __host__ __device__ int64_t operator()(const MapAxis& a, int64_t j) const {
    return ops::expand::source(j, a.inDim);
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ExpandParams* p = validate<ExpandParams>(c, "expand", -1, true, whyNot);
  if (!p) return nullptr;
  const Dims& out = c.outputs[0].dims;
  const AxisMap m = identityMap(ops::expand::alignedInput(c.inputs[0].dims, out.nbDims), out);
  return makeMapKernel<ExpandRule>(m, c.inputs[0].type, "expand");
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Expand::cudaTactics() { return cuda::kTactics; }
