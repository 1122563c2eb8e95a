// Reduce (sum, mean, max over the axes of a mask; argmax over one axis) on CUDA. Tactics, fastest
// first:
//   contiguous_rows  one thread block per output element when each reduces one contiguous row
//                    (trailing axes of a row-major tensor, or the channels of a channels-last
//                    one) with a shared-memory/shuffle reduction; not emulatable (kUnsupported
//                    under RunContext::emulate)
//   reference        one per-element function per output element (emulatable on the host) that
//                    loops over the reduced extent, indexing through per-dim memory strides so
//                    that any mix of linear and channels-last works
//
// Value rules: reduce_semantics.h, the CPU's (reduce_cpu.cpp). sum/mean accumulate in double (as
// the CPU does); over an empty extent sum is 0, mean NaN, max -inf; max propagates NaN. argmax
// writes int64, the first index of the maximum, the first NaN winning; integers compare exactly in
// their own type.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/reduce/reduce_semantics.h"

namespace kiln::cuda::reduce {
namespace {

using config_checks::fail;

struct ReduceGeometry {
  StridedWalk kept;     // non-reduced dims; s1: input strides, s2: output strides
  StridedWalk reduced;  // reduced dims; s1: input strides (s2 unused)
  int64_t count = 1;    // input elements per output element
};

template <class T>
struct ReduceElement {
  const T* x;
  void* y;
  ReduceGeometry g;
  ReduceOp op;
  __host__ __device__ void operator()(int64_t o) const {
    int64_t base, at;
    g.kept.offsets(o, base, at);
    if (op == ReduceOp::kARGMAX) {
      // One reduced axis, of at least one element (inference); the CPU's scan exactly.
      using C = std::conditional_t<std::is_integral_v<T>, T, float>;
      const int64_t n = g.reduced.dims[0], s = g.reduced.s1[0];
      auto load = [&](int64_t k) -> C {
        if constexpr (std::is_integral_v<T>)
          return x[base + k * s];
        else
          return toFloat(x[base + k * s]);
      };
      static_cast<int64_t*>(y)[at] = ops::reduce::argmaxIndex<C>(n, load);
      return;
    }
    if constexpr (!std::is_integral_v<T>) {
      float result;
      if (op == ReduceOp::kMAX) {
        float m = -INFINITY;
        for (int64_t j = 0; j < g.count; ++j) {
          int64_t off, unused;
          g.reduced.offsets(j, off, unused);
          const float v = toFloat(x[base + off]);
          if (ops::reduce::replacesMax(m, v)) m = v;
        }
        result = m;
      } else {
        double acc = 0.0;
        for (int64_t j = 0; j < g.count; ++j) {
          int64_t off, unused;
          g.reduced.offsets(j, off, unused);
          acc += toFloat(x[base + off]);
        }
        if (op == ReduceOp::kMEAN) acc = acc / static_cast<double>(g.count);  // 0/0: NaN
        result = static_cast<float>(acc);
      }
      static_cast<T*>(y)[at] = fromFloat<T>(result);
    }
  }
};

// ---- block reduction (contiguous_rows) ------------------------------------------------------

template <class C>
struct ArgBest {
  C v;
  int64_t i;  // -1: no element yet
};

template <class C>
__device__ inline ArgBest<C> shflXor(ArgBest<C> v, int o) {
  ArgBest<C> r;
  if constexpr (std::is_same_v<C, float>)
    r.v = __shfl_xor_sync(0xffffffffu, v.v, o);
  else
    r.v = static_cast<C>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v.v), o));
  r.i = static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v.i), o));
  return r;
}

// reduce max: NaN wins.
struct MaxPropagateNan {
  __device__ float operator()(float a, float b) const {
    return a != a ? a : (b != b ? b : fmaxf(a, b));
  }
};
// argmax order: the first NaN, else the first maximum; an empty side loses.
struct ArgBetter {
  template <class C>
  __device__ ArgBest<C> operator()(ArgBest<C> a, ArgBest<C> b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i < b.i ? a : b;
      return an ? a : b;
    }
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
    return a.i < b.i ? a : b;
  }
};

template <class T>
__global__ void reduceRowsKernel(const T* x, void* y, int64_t rows, int64_t len, ReduceOp op) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    if (op == ReduceOp::kARGMAX) {
      using C = std::conditional_t<std::is_integral_v<T>, T, float>;
      ArgBest<C> b{C{}, -1};
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
        C e;
        if constexpr (std::is_integral_v<T>)
          e = xr[j];
        else
          e = toFloat(xr[j]);
        b = ArgBetter{}(b, ArgBest<C>{e, j});
      }
      b = blockReduce(b, ArgBetter{});
      if (threadIdx.x == 0) static_cast<int64_t*>(y)[r] = b.i;
      continue;
    }
    if constexpr (!std::is_integral_v<T>) {
      float result;
      if (op == ReduceOp::kMAX) {
        float m = -INFINITY;
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
          m = MaxPropagateNan{}(m, toFloat(xr[j]));
        result = blockReduce(m, MaxPropagateNan{});
      } else {
        double acc = 0.0;
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x) acc += toFloat(xr[j]);
        acc = blockReduce(acc, SumD{});
        if (op == ReduceOp::kMEAN) acc = acc / static_cast<double>(len);
        result = static_cast<float>(acc);
      }
      if (threadIdx.x == 0) static_cast<T*>(y)[r] = fromFloat<T>(result);
    }
  }
}

// ---- kernels and tactics --------------------------------------------------------------------

const ReduceParams* checkReduce(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = config_checks::validate<ReduceParams>(c, DeviceKind::kCUDA, "reduce", 1,
                                                                &ops::Reduce::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  if (!isFloatType(t) &&
      !(p->op == ReduceOp::kARGMAX && (t == DataType::kINT32 || t == DataType::kINT64))) {
    fail(whyNot, std::string("reduce: unsupported input type ") + dataTypeName(t));
    return nullptr;
  }
  return p;
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = checkReduce(c, whyNot);
  if (!p) return nullptr;
  const Dims& d = c.inputs[0].dims;
  int64_t si[Dims::kMaxDims] = {}, so[Dims::kMaxDims] = {};
  memoryStrides(c.inputs[0], si);
  memoryStrides(c.outputs[0], so);
  ReduceGeometry g;
  int32_t outDim = 0;  // the output dim that input dim i maps to
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const bool reduced = (p->axesMask >> i) & 1u;
    if (reduced) {
      g.reduced.dims[g.reduced.rank] = d.d[i];
      g.reduced.s1[g.reduced.rank] = si[i];
      ++g.reduced.rank;
      g.count *= d.d[i];
      if (p->keepDims) ++outDim;
    } else {
      g.kept.dims[g.kept.rank] = d.d[i];
      g.kept.s1[g.kept.rank] = si[i];
      g.kept.s2[g.kept.rank] = so[outDim++];
      ++g.kept.rank;
    }
  }
  const ReduceOp op = p->op;
  const int64_t outputs = volume(c.outputs[0].dims);
  return makeTypedKernel<FloatOrIntTypes>(
      c.inputs[0].type,
      [op, g, outputs](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        ReduceElement<T> f{static_cast<const T*>(in[0]), out[0], g, op};
        return launchElements(f, outputs, ctx, "reduce_reference");
      });
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = checkReduce(c, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  const int32_t rank = x.dims.nbDims;
  // Trailing axes of a row-major input, or the channels of a channels_last one: each output
  // element reduces one contiguous row, and the rows come in the output's memory order.
  const uint32_t all = rank >= 32 ? ~0u : ((1u << rank) - 1u);
  bool trailing = false;
  for (int32_t k = 0; k < rank; ++k)
    if (p->axesMask == (all & ~((1u << k) - 1u))) trailing = true;
  const bool rowMajorTrailing = trailing && isRowMajor(x) && isRowMajor(y);
  const bool channels =
      rank == 4 && x.format == TensorFormat::kCHANNELS_LAST && p->axesMask == 2u && isRowMajor(y);
  if (!rowMajorTrailing && !channels) {
    fail(whyNot, "reduce contiguous_rows: the reduced axes (mask " + std::to_string(p->axesMask) +
                     ") are not one contiguous row per output element in memory");
    return nullptr;
  }
  int64_t len = 1;
  for (int32_t i = 0; i < rank; ++i)
    if ((p->axesMask >> i) & 1u) len *= x.dims.d[i];
  const ReduceOp op = p->op;
  const int64_t rows = volume(y.dims);
  return makeTypedKernel<FloatOrIntTypes>(
      x.type,
      [op, rows, len](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        if (ctx.emulate) return notEmulated("reduce contiguous_rows");
        if (rows == 0) return Status::ok();
        using T = decltype(tag);
        reduceRowsKernel<T>
            <<<blocksFor(rows), threadsFor(len), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
                static_cast<const T*>(in[0]), out[0], rows, len, op);
        return checkLaunch("reduce_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"contiguous_rows", &createRows}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::reduce

std::span<const kiln::Tactic> kiln::ops::Reduce::cudaTactics() { return cuda::reduce::kTactics; }
