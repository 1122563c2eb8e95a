// Shuffle on CUDA. One tactic: "reference". It moves elements without looking at them, so one
// kernel per element size serves every data type; linear tensors only (the builder reformats
// around it). Which copies it makes, and the index mapping of each, is shuffle_semantics.h
// (shared with the CPU kernel); each copy is an axis map (backends/cuda/axis_map.cuh).
#include <cstring>

#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "ops/op.h"
#include "ops/shuffle/shuffle_semantics.h"

namespace kiln::cuda {
namespace {

// A plain byte copy on the stream (or on the host under emulation).
Status copyBytes(void* dst, const void* src, size_t bytes, const RunContext& ctx) {
  if (bytes == 0 || dst == src) return Status::ok();
  if (ctx.emulate) {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                  static_cast<cudaStream_t>(ctx.stream)));
  return Status::ok();
}

// The axis map of a permuted copy: output axis i reads the input at stride inStrides[i].
AxisMap permuteMap(const ops::shuffle::Permutation& p) {
  AxisMap m;
  m.rank = p.rank;
  int64_t count = 1;
  for (int32_t i = 0; i < p.rank; ++i) {
    m.axes[i].outDim = p.outDims[i];
    m.axes[i].inDim = p.outDims[i];
    m.axes[i].inStride = p.inStrides[i];
    count *= p.outDims[i];
  }
  m.count = count;
  return m;
}

// The plan, with its copies as axis maps (map1 of p1, map2 of p2).
class ShuffleKernel final : public Kernel {
 public:
  ShuffleKernel(const ops::shuffle::Plan& plan, const AxisMap& map1, const AxisMap& map2)
      : s_(plan), map1_(map1), map2_(map2) {}

  size_t workspaceSize() const override { return static_cast<size_t>(s_.workspaceBytes()); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (s_.bytes == 0) return Status::ok();
    const auto e = static_cast<size_t>(s_.elemSize);
    const SameCoordinate same;
    if (s_.first && s_.second) {
      Status st = runMap(map1_, same, e, in[0], workspace, ctx, "shuffle_transpose1");
      if (!st) return st;
      return runMap(map2_, same, e, workspace, out[0], ctx, "shuffle_transpose2");
    }
    if (s_.first) return runMap(map1_, same, e, in[0], out[0], ctx, "shuffle_transpose1");
    if (s_.second) return runMap(map2_, same, e, in[0], out[0], ctx, "shuffle_transpose2");
    return copyBytes(out[0], in[0], static_cast<size_t>(s_.bytes), ctx);
  }

 private:
  ops::shuffle::Plan s_;
  AxisMap map1_, map2_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", 1, true, whyNot);
  if (!p) return nullptr;
  const ops::shuffle::Plan plan =
      ops::shuffle::plan(*p, c.inputs[0].dims, c.outputs[0].dims, dataTypeSize(c.inputs[0].type));
  return std::make_unique<ShuffleKernel>(plan, permuteMap(plan.p1), permuteMap(plan.p2));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Shuffle::cudaTactics() { return cuda::kTactics; }
