// ScatterND on CUDA. One tactic: "reference", a per-element function over the output (emulatable
// on the host): element e starts as Data's and then takes, in tuple order, every update whose
// slice covers it (scatter_nd_semantics.h, the CPU's rules), so the result is deterministic and
// the same as the CPU's, repeated tuples included, with no atomics. It costs one pass over the
// tuples per element: fine for the index tables and masks exports scatter into; a large
// scatter would want a sort-by-destination kernel.
//
// Out-of-range indices: as Gather on CUDA, run() cannot fail on values in device memory without
// synchronising, so a tuple with an index outside [-d, d) is skipped (it writes nothing) and the
// kernel sets a 32-bit error flag in its workspace, reset before each launch.
#include <type_traits>

#include "backends/cuda/element_size.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/scatter_nd/scatter_nd_semantics.h"

namespace kiln::cuda {
namespace {

namespace sn = ops::scatter_nd;

// An update combined with the element it lands on; 16-bit floats in fp32.
template <class T>
__host__ __device__ inline T combined(ScatterReduction r, T old, T update) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
    return fromFloat<T>(sn::combine(r, toFloat(old), toFloat(update)));
  else
    return sn::combine(r, old, update);
}

// kReduce false: T is an unsigned integer of the element's size and updates replace.
template <class T, class I, bool kReduce>
struct ScatterElement {
  const T* data;
  const I* indices;
  const T* updates;
  T* out;
  int32_t* errorFlag;
  sn::Geometry g;
  __host__ __device__ void operator()(int64_t e) const {
    T v = data[e];
    for (int64_t t = 0; t < g.tuples; ++t) {
      int32_t axis = 0;
      const int64_t start = sn::sliceStart(g, indices, t, &axis);
      if (start < 0) {
        *errorFlag = 1;  // every writer stores the same value: a benign race
        continue;
      }
      if (e < start || e >= start + g.sliceSize) continue;
      const T u = updates[t * g.sliceSize + (e - start)];
      if constexpr (kReduce)
        v = combined(g.reduction, v, u);
      else
        v = u;
    }
    out[e] = v;
  }
};

class ScatterNDKernel final : public Kernel {
 public:
  ScatterNDKernel(const sn::Geometry& g, DataType type, bool wide)
      : g_(g), type_(type), wide_(wide) {}

  size_t workspaceSize() const override { return sizeof(int32_t); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (g_.count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    if (ctx.emulate) {
      *flag = 0;
    } else {
      KILN_CUDA_CHECK(
          cudaMemsetAsync(flag, 0, sizeof(int32_t), static_cast<cudaStream_t>(ctx.stream)));
    }
    return wide_ ? launch(static_cast<const int64_t*>(in[1]), in, out[0], flag, ctx)
                 : launch(static_cast<const int32_t*>(in[1]), in, out[0], flag, ctx);
  }

 private:
  template <class I>
  Status launch(const I* indices, const void* const* in, void* out, int32_t* flag,
                const RunContext& ctx) const {
    if (g_.reduction == ScatterReduction::kNONE) {
      return bySize(dataTypeSize(type_), [&](auto u) {
        using U = decltype(u);
        return launchElements(ScatterElement<U, I, false>{static_cast<const U*>(in[0]), indices,
                                                          static_cast<const U*>(in[2]),
                                                          static_cast<U*>(out), flag, g_},
                              g_.count, ctx, "scatter_nd");
      });
    }
    return launchTyped<FloatOrIntTypes>(type_, [&](auto tag) {
      using T = decltype(tag);
      return launchElements(
          ScatterElement<T, I, true>{static_cast<const T*>(in[0]), indices,
                                     static_cast<const T*>(in[2]), static_cast<T*>(out), flag, g_},
          g_.count, ctx, "scatter_nd");
    });
  }

  sn::Geometry g_;
  DataType type_;
  bool wide_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const auto* p = validate<ScatterNDParams>(c, "scatter_nd", 3, true, whyNot);
  if (!p) return nullptr;
  return std::make_unique<ScatterNDKernel>(
      sn::geometryOf(c.inputs[0].dims, c.inputs[1].dims, p->reduction), c.inputs[0].type,
      c.inputs[1].type == DataType::kINT64);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::ScatterND::cudaTactics() { return cuda::kTactics; }
