// Gather on CUDA (ONNX Gather), for every data type (kernels per element size), linear tensors
// only: output [outer, nbIndices, inner] reads data [outer, axisDim, inner] at indices[k], by the
// layout and index rule of gather_semantics.h (shared with the CPU kernel). Tactics, fastest
// first:
//   slab_vectorized  inner > 1: each selected slab of `inner` elements is copied as 16-, 8-, 4-
//                    or 2-byte vectors (the widest the slab, the element size and the pointers
//                    allow), one thread per vector; torch's MHA export picks q, k and v this way
//   reference        one thread per element
//
// Out-of-range indices. The CPU reference checks every index before writing and fails run().
// On the GPU the indices live in device memory and run() must not synchronize, so it cannot
// return that error. Decision: an element whose index is outside [-axisDim, axisDim) is written
// as all-zero bytes (0, 0.0 or false in every type) and never read out of bounds; the kernel
// also sets a 32-bit error flag in its workspace (reset to 0 by run() with cudaMemsetAsync
// before the launch, so it describes this run only). A caller that synchronizes anyway (a
// debug mode, a test) may read workspace[0] != 0 as "some index was out of range".
#include <algorithm>

#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/vector_copy.cuh"
#include "ops/gather/gather_semantics.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

template <class T, class I>
struct GatherOp {
  const T* data;
  const I* indices;
  T* out;
  int32_t* errorFlag;
  int64_t axisDim, nbIndices, inner;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t r = i % inner;
    const int64_t t = i / inner;
    const int64_t k = t % nbIndices, o = t / nbIndices;
    const int64_t v = ops::gather::position(static_cast<int64_t>(indices[k]), axisDim);
    if (ops::gather::inRange(v, axisDim)) {
      out[i] = data[(o * axisDim + v) * inner + r];
      return;
    }
    out[i] = T(0);
    *errorFlag = 1;  // every writer stores the same value: a benign race
  }
};

// What both tactics' kernels hold: the layout, the index type, and the error flag in the
// workspace, cleared on the stream before each launch.
class GatherKernelBase : public Kernel {
 public:
  GatherKernelBase(size_t elemSize, bool wide, const ops::gather::Split& s, int64_t nbIndices)
      : elemSize_(elemSize),
        wide_(wide),
        outer_(s.outer),
        axisDim_(s.axisDim),
        nbIndices_(nbIndices),
        inner_(s.inner) {}

  size_t workspaceSize() const override { return sizeof(int32_t); }

 protected:
  static Status clearFlag(int32_t* flag, const RunContext& ctx) {
    if (ctx.emulate) {
      *flag = 0;
      return Status::ok();
    }
    KILN_CUDA_CHECK(
        cudaMemsetAsync(flag, 0, sizeof(int32_t), static_cast<cudaStream_t>(ctx.stream)));
    return Status::ok();
  }

  size_t elemSize_;
  bool wide_;
  int64_t outer_, axisDim_, nbIndices_, inner_;
};

class GatherKernel final : public GatherKernelBase {
 public:
  using GatherKernelBase::GatherKernelBase;

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    const int64_t count = outer_ * nbIndices_ * inner_;
    if (count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    KILN_RETURN_IF_ERROR(clearFlag(flag, ctx));
    return bySize(elemSize_, [&](auto u) {
      using U = decltype(u);
      const U* data = static_cast<const U*>(in[0]);
      U* o = static_cast<U*>(out[0]);
      if (wide_)
        return launchElements(GatherOp<U, int64_t>{data, static_cast<const int64_t*>(in[1]), o,
                                                   flag, axisDim_, nbIndices_, inner_},
                              count, ctx, "gather");
      return launchElements(GatherOp<U, int32_t>{data, static_cast<const int32_t*>(in[1]), o, flag,
                                                 axisDim_, nbIndices_, inner_},
                            count, ctx, "gather");
    });
  }
};

// One vector of a slab per index i: vector r of slab (o, k) of the output reads vector r of slab
// (o, position(indices[k])) of the data; the out-of-range rule is the reference's.
template <class V, class I>
struct GatherSlabOp {
  const V* data;
  const I* indices;
  V* out;
  int32_t* errorFlag;
  int64_t axisDim, nbIndices, slabVectors;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t t = i / slabVectors;
    const int64_t r = i - t * slabVectors;
    const int64_t o = t / nbIndices, k = t - o * nbIndices;
    const int64_t v = ops::gather::position(static_cast<int64_t>(indices[k]), axisDim);
    if (ops::gather::inRange(v, axisDim)) {
      out[i] = data[(o * axisDim + v) * slabVectors + r];
      return;
    }
    out[i] = V{};  // all-zero bytes, as the reference writes
    *errorFlag = 1;
  }
};

class GatherSlabKernel final : public GatherKernelBase {
 public:
  using GatherKernelBase::GatherKernelBase;

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    const int64_t count = outer_ * nbIndices_ * inner_;
    if (count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    KILN_RETURN_IF_ERROR(clearFlag(flag, ctx));
    // The vector divides the slab's bytes and both addresses (every slab starts at a multiple of
    // the slab in each tensor); elements are naturally aligned, so never narrower than one.
    const int v = std::max(
        static_cast<int>(elemSize_),
        widestVector(static_cast<uint64_t>(inner_) * elemSize_ |
                     reinterpret_cast<uintptr_t>(in[0]) | reinterpret_cast<uintptr_t>(out[0])));
    const int64_t slabVectors = inner_ * static_cast<int64_t>(elemSize_) / v;
    return byVectorBytes(v, [&](auto vec) {
      using V = decltype(vec);
      const V* data = static_cast<const V*>(in[0]);
      V* o = static_cast<V*>(out[0]);
      const int64_t vectors = outer_ * nbIndices_ * slabVectors;
      if (wide_)
        return launchElements(GatherSlabOp<V, int64_t>{data, static_cast<const int64_t*>(in[1]), o,
                                                       flag, axisDim_, nbIndices_, slabVectors},
                              vectors, ctx, "gather_slab");
      return launchElements(GatherSlabOp<V, int32_t>{data, static_cast<const int32_t*>(in[1]), o,
                                                     flag, axisDim_, nbIndices_, slabVectors},
                            vectors, ctx, "gather_slab");
    });
  }
};

KernelPtr createSlabVectorized(const KernelConfig& c, std::string* whyNot) {
  const GatherParams* p = validate<GatherParams>(c, "gather", 2, true, whyNot);
  if (!p) return nullptr;
  const ops::gather::Split s = ops::gather::split(c.inputs[0].dims, p->axis);
  if (s.inner <= 1) {
    setWhyNot(whyNot,
              "slab_vectorized: the gathered axis is the innermost (slabs of one element, "
              "no vector to copy)");
    return nullptr;
  }
  return std::make_unique<GatherSlabKernel>(dataTypeSize(c.inputs[0].type),
                                            c.inputs[1].type == DataType::kINT64, s,
                                            volume(c.inputs[1].dims));
}

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const GatherParams* p = validate<GatherParams>(c, "gather", 2, true, whyNot);
  if (!p) return nullptr;
  const ops::gather::Split s = ops::gather::split(c.inputs[0].dims, p->axis);
  return std::make_unique<GatherKernel>(dataTypeSize(c.inputs[0].type),
                                        c.inputs[1].type == DataType::kINT64, s,
                                        volume(c.inputs[1].dims));
}

constexpr Tactic kTactics[] = {{"slab_vectorized", &createSlabVectorized},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Gather::cudaTactics() { return cuda::kTactics; }
