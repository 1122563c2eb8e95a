// Slice on CUDA, for every data type (kernels per element size), linear tensors only. The rule is
// slice_semantics.h, shared with the CPU kernel. Tactics, fastest first:
//   runs_vectorized  the innermost axis (after collapsing) has step 1: contiguous runs copied one
//                    16-, 8-, 4-, 2- or 1-byte vector per thread (backends/cuda/vector_copy.cuh)
//   reference        an axis map (backends/cuda/axis_map.cuh), one element per thread
#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/vector_copy.cuh"
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
  const SliceParams* p = validate<SliceParams>(c, "slice", -1, true, whyNot);
  if (!p) return nullptr;
  AxisMap m = identityMap(c.inputs[0].dims, c.outputs[0].dims);
  for (int32_t i = 0; i < m.rank; ++i) {  // inference proved every read inside the input
    m.axes[i].start = p->startOn(i, c.inputs[0].dims.d[i]);
    m.axes[i].step = p->steps.d[i];
  }
  return makeMapKernel<SliceRule>(m, c.inputs[0].type, "slice");
}

class RunsKernel final : public Kernel {
 public:
  explicit RunsKernel(const CollapsedCopy& c) : c_(c) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return runCollapsedCopy(c_, in[0], out[0], ctx, "slice_runs");
  }

 private:
  CollapsedCopy c_;
};

KernelPtr createRunsVectorized(const KernelConfig& c, std::string* whyNot) {
  const SliceParams* p = validate<SliceParams>(c, "slice", -1, true, whyNot);
  if (!p) return nullptr;
  const Dims& in = c.inputs[0].dims;
  const Dims& out = c.outputs[0].dims;
  int64_t own[Dims::kMaxDims] = {}, stride[Dims::kMaxDims] = {};
  rowMajorStrides(in, own);
  int64_t base = 0;
  for (int32_t i = 0; i < in.nbDims; ++i) {
    // Output coordinate j of axis i reads ops::slice::source(start, step, j): the offset is
    // start * own + j * (step * own).
    const int64_t start = p->startOn(i, in.d[i]);
    base += ops::slice::source(start, p->steps.d[i], 0) * own[i];
    stride[i] = p->steps.d[i] * own[i];
  }
  const CollapsedCopy cc = collapseCopy(out.nbDims, out.d, stride, volume(out) == 0 ? 0 : base,
                                        static_cast<int64_t>(dataTypeSize(c.inputs[0].type)));
  if (!cc.innerContiguous()) {
    setWhyNot(whyNot, "runs_vectorized: the innermost axis that moves data has step " +
                          std::to_string(cc.inStride[cc.rank - 1]) +
                          " elements in the input: no contiguous run to copy as vectors");
    return nullptr;
  }
  return std::make_unique<RunsKernel>(cc);
}

constexpr Tactic kTactics[] = {{"runs_vectorized", &createRunsVectorized},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Slice::cudaTactics() { return cuda::kTactics; }
