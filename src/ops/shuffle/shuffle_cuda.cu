// Shuffle on CUDA. Its kernels move elements without looking at them, so one kernel per element
// size serves every data type; linear tensors only (the builder reformats around it), but for
// channels_last_copy. Which
// copies it makes, and the index mapping of each, is shuffle_semantics.h (shared with the CPU
// kernel). Tactics, fastest first:
//   channels_last_copy  a channels-last input whose shuffle writes the linear output in the
//                       input's own memory order (ViT's patch tokens): one cudaMemcpyAsync
//   permute_vectorized  every permuted copy, its axes collapsed, keeps its innermost axis
//                       (the usual attention-head permutes): contiguous runs copied one 16-, 8-,
//                       4-, 2- or 1-byte vector per thread (backends/cuda/vector_copy.cuh)
//   tiled_transpose     some copy moves its innermost axis: that copy is a 32x32 shared-memory
//                       tiled transpose (no host emulation), any other one a vectorized copy
//   reference           each copy an axis map (backends/cuda/axis_map.cuh), one element per
//                       thread: the correctness oracle
#include <cstring>

#include "backends/cuda/axis_map.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/vector_copy.cuh"
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
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", -1, true, whyNot);
  if (!p) return nullptr;
  const ops::shuffle::Plan plan =
      ops::shuffle::plan(*p, c.inputs[0].dims, c.outputs[0].dims, dataTypeSize(c.inputs[0].type));
  return std::make_unique<ShuffleKernel>(plan, permuteMap(plan.p1), permuteMap(plan.p2));
}

// One permuted copy of the fast tactics: a collapsed vector copy, or a tiled transpose.
struct FastCopy {
  CollapsedCopy copy;
  bool tiled = false;
  TransposeGeometry transpose;
};

FastCopy fastCopy(const ops::shuffle::Permutation& p, int64_t elemSize) {
  FastCopy f;
  f.copy = collapseCopy(p.rank, p.outDims, p.inStrides, 0, elemSize);
  return f;
}

Status runFast(const FastCopy& f, const void* in, void* out, const RunContext& ctx,
               const char* name) {
  if (f.tiled)
    return runTiledTranspose(f.transpose, static_cast<size_t>(f.copy.elemSize), in, out, ctx, name);
  return runCollapsedCopy(f.copy, in, out, ctx, name);
}

class FastShuffleKernel final : public Kernel {
 public:
  FastShuffleKernel(const ops::shuffle::Plan& plan, const FastCopy& c1, const FastCopy& c2)
      : s_(plan), c1_(c1), c2_(c2) {}

  size_t workspaceSize() const override { return static_cast<size_t>(s_.workspaceBytes()); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (s_.bytes == 0) return Status::ok();
    if (s_.first && s_.second) {
      Status st = runFast(c1_, in[0], workspace, ctx, "shuffle_fast1");
      if (!st) return st;
      return runFast(c2_, workspace, out[0], ctx, "shuffle_fast2");
    }
    if (s_.first) return runFast(c1_, in[0], out[0], ctx, "shuffle_fast1");
    return runFast(c2_, in[0], out[0], ctx, "shuffle_fast2");
  }

 private:
  ops::shuffle::Plan s_;
  FastCopy c1_, c2_;
};

// The plan and its copies when some copy permutes; false (with *whyNot) otherwise.
bool fastPlan(const KernelConfig& c, const char* tactic, ops::shuffle::Plan& plan, FastCopy& c1,
              FastCopy& c2, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", -1, true, whyNot);
  if (!p) return false;
  plan =
      ops::shuffle::plan(*p, c.inputs[0].dims, c.outputs[0].dims, dataTypeSize(c.inputs[0].type));
  if (!plan.first && !plan.second) {
    setWhyNot(whyNot, std::string(tactic) +
                          ": no transpose permutes, so the layer is one plain copy (the "
                          "reference's cudaMemcpyAsync)");
    return false;
  }
  if (plan.first) c1 = fastCopy(plan.p1, plan.elemSize);
  if (plan.second) c2 = fastCopy(plan.p2, plan.elemSize);
  return true;
}

// A permutation that moves only axes of size 1 collapses to one contiguous run: that is a vector
// copy too.
KernelPtr createPermuteVectorized(const KernelConfig& c, std::string* whyNot) {
  ops::shuffle::Plan plan;
  FastCopy c1, c2;
  if (!fastPlan(c, "permute_vectorized", plan, c1, c2, whyNot)) return nullptr;
  for (const FastCopy* f : {&c1, &c2}) {
    if (!f->copy.innerContiguous()) {
      setWhyNot(whyNot, std::string("permute_vectorized: copy ") + (f == &c1 ? "1" : "2") +
                            " moves the innermost axis (no contiguous run to copy as vectors); "
                            "tiled_transpose takes it");
      return nullptr;
    }
  }
  return std::make_unique<FastShuffleKernel>(plan, c1, c2);
}

KernelPtr createTiledTranspose(const KernelConfig& c, std::string* whyNot) {
  ops::shuffle::Plan plan;
  FastCopy c1, c2;
  if (!fastPlan(c, "tiled_transpose", plan, c1, c2, whyNot)) return nullptr;
  bool anyTiled = false;
  for (FastCopy* f : {&c1, &c2}) {
    if (f->copy.innerContiguous()) continue;
    std::string why;
    if (!transposeGeometry(f->copy, f->transpose, &why)) {
      setWhyNot(whyNot, "tiled_transpose: " + why);
      return nullptr;
    }
    f->tiled = true;
    anyTiled = true;
  }
  if (!anyTiled) {
    setWhyNot(whyNot,
              "tiled_transpose: every copy keeps its innermost axis in place (permute_vectorized "
              "copies it as vectors)");
    return nullptr;
  }
  return std::make_unique<FastShuffleKernel>(plan, c1, c2);
}

// The input channels-last, the output linear, and the output in the input's memory order
// (ops::shuffle::channelsLastInOrder): one plain copy, with no reformat before the layer.
KernelPtr createChannelsLastCopy(const KernelConfig& c, std::string* whyNot) {
  const ShuffleParams* p = validate<ShuffleParams>(c, "shuffle", -1, false, whyNot);
  if (!p) return nullptr;
  if (c.inputs[0].format != TensorFormat::kCHANNELS_LAST ||
      c.outputs[0].format != TensorFormat::kLINEAR) {
    setWhyNot(whyNot, "channels_last_copy: reads a channels-last input into a linear output only");
    return nullptr;
  }
  if (!ops::shuffle::channelsLastInOrder(*p, c.inputs[0].dims, c.outputs[0].dims)) {
    setWhyNot(whyNot,
              "channels_last_copy: the output is not the channels-last input's memory order");
    return nullptr;
  }
  // No transpose runs: without its copies the plan is one plain byte copy.
  ops::shuffle::Plan copy =
      ops::shuffle::plan(*p, c.inputs[0].dims, c.outputs[0].dims, dataTypeSize(c.inputs[0].type));
  copy.first = copy.second = false;
  return std::make_unique<ShuffleKernel>(copy, AxisMap{}, AxisMap{});
}

constexpr Tactic kTactics[] = {{"channels_last_copy", &createChannelsLastCopy},
                               {"permute_vectorized", &createPermuteVectorized},
                               {"tiled_transpose", &createTiledTranspose},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Shuffle::cudaTactics() { return cuda::kTactics; }
