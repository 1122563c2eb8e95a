// Elementwise binary ops on CUDA: per-element functions (emulatable on the host). Tactics,
// fastest first:
//   same_shape       both inputs have the output's dims and memory layout: out[i] = a[i] op b[i],
//                    16 bytes of each input per thread (8 fp16/bf16, 4 fp32) when aligned
//   row_broadcast    one input has the output's dims and layout (row-major), the other is
//                    broadcast along leading dims only ([N], [1,1,N], a [1,S,E] position
//                    embedding over [B,S,E]), so it repeats every P elements: b[i % P]; vectors
//                    as same_shape when P is a multiple of one
//   scalar_broadcast one input holds one value, the other has the output's dims and layout
//   reference        numpy broadcasting at any rank <= 8 through per-dim memory strides, so any
//                    mix of linear and channels-last inputs/output
//
// Value rules: elementwise_semantics.h, the CPU's (elementwise_cpu.cpp). Float types
// (fp32/fp16/bf16) compute in fp32 and round once on store; int32/int64 in their own type; bool
// has equal only.
// The op is a kernel argument (a warp-uniform switch), not a template parameter: it keeps the
// number of instantiated kernels (and the build time) small at no measurable cost for
// memory-bound kernels.
#include <cstdint>
#include <type_traits>

#include "backends/config_checks.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/elementwise/elementwise_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::elementwise {
namespace {

using config_checks::fail;
using ops::elementwise::apply;
using ops::elementwise::applyArithmetic;
using ops::elementwise::isComparison;

template <class C>
__host__ __device__ inline uint8_t compare(ElementwiseOp op, C a, C b) {
  switch (op) {
    case ElementwiseOp::kEQUAL:
      return apply<ElementwiseOp::kEQUAL>(a, b);
    case ElementwiseOp::kLESS:
      return apply<ElementwiseOp::kLESS>(a, b);
    case ElementwiseOp::kGREATER_OR_EQUAL:
      return apply<ElementwiseOp::kGREATER_OR_EQUAL>(a, b);
    case ElementwiseOp::kLESS_OR_EQUAL:
      return apply<ElementwiseOp::kLESS_OR_EQUAL>(a, b);
    default:
      return apply<ElementwiseOp::kGREATER>(a, b);
  }
}

// out[at] = a op b for storage type T (uint8_t: bool).
template <class T>
__host__ __device__ inline void applyBinary(ElementwiseOp op, bool cmp, T a, T b, void* out,
                                            int64_t at) {
  if constexpr (std::is_same_v<T, uint8_t>) {  // bool: equal and the logical ops
    uint8_t r;
    switch (op) {
      case ElementwiseOp::kAND:
        r = apply<ElementwiseOp::kAND>(a, b);
        break;
      case ElementwiseOp::kOR:
        r = apply<ElementwiseOp::kOR>(a, b);
        break;
      case ElementwiseOp::kXOR:
        r = apply<ElementwiseOp::kXOR>(a, b);
        break;
      default:
        r = apply<ElementwiseOp::kEQUAL>(a, b);
    }
    static_cast<uint8_t*>(out)[at] = r;
  } else if constexpr (std::is_integral_v<T>) {
    if (cmp)
      static_cast<uint8_t*>(out)[at] = compare<T>(op, a, b);
    else
      static_cast<T*>(out)[at] = applyArithmetic<T>(op, a, b);
  } else {
    const float x = toFloat(a), y = toFloat(b);
    if (cmp)
      static_cast<uint8_t*>(out)[at] = compare<float>(op, x, y);
    else
      static_cast<T*>(out)[at] = fromFloat<T>(applyArithmetic<float>(op, x, y));
  }
}

// out[i] = a[i * sa] op b[i * sb], sa and sb in {0, 1}: same_shape and scalar_broadcast.
template <class T>
struct FlatBinary {
  const T* a;
  const T* b;
  void* out;
  int64_t sa, sb;
  ElementwiseOp op;
  bool cmp;
  __host__ __device__ void operator()(int64_t i) const {
    applyBinary<T>(op, cmp, a[i * sa], b[i * sb], out, i);
  }
};

// Group g of kN = 16 / sizeof(T) consecutive output elements: out[i] = a[i % pa] op b[i % pb]
// for i in the group, pa and pb the inputs' periods (the element count for an input of the
// output's shape). `vec` (set per run from the addresses) says that both inputs and the output
// are 16-byte aligned and both periods are multiples of kN, so that a whole group of each input
// is one aligned 16-byte load and the result one store; the last, partial group and the
// unaligned case take the scalar path. Values are applyBinary's either way, so every element is
// bit for bit what the reference writes.
template <class T>
struct VectorBinary {
  static constexpr int kN = 16 / sizeof(T);
  struct alignas(16) Pack {
    T v[kN];
  };
  const T* a;
  const T* b;
  void* out;
  int64_t count, pa, pb;
  ElementwiseOp op;
  bool cmp, vec;
  __host__ __device__ void operator()(int64_t g) const {
    const int64_t base = g * kN;
    if (vec && base + kN <= count) {
      // A group never straddles a period (kN divides both), so it is contiguous in each input.
      const Pack x = *reinterpret_cast<const Pack*>(a + (pa == count ? base : base % pa));
      const Pack y = *reinterpret_cast<const Pack*>(b + (pb == count ? base : base % pb));
      if (cmp || std::is_same_v<T, uint8_t>) {  // bytes out: stored one by one
        for (int e = 0; e < kN; ++e) applyBinary<T>(op, cmp, x.v[e], y.v[e], out, base + e);
        return;
      }
      Pack r;
#pragma unroll
      for (int e = 0; e < kN; ++e) applyBinary<T>(op, false, x.v[e], y.v[e], r.v, e);
      *reinterpret_cast<Pack*>(static_cast<T*>(out) + base) = r;
      return;
    }
    const int64_t end = base + kN < count ? base + kN : count;
    for (int64_t i = base; i < end; ++i)
      applyBinary<T>(op, cmp, a[pa == count ? i : i % pa], b[pb == count ? i : i % pb], out, i);
  }
};

// out[i] = a[i % pa] op b[i % pb] over `count` elements, kN per thread.
std::unique_ptr<Kernel> makeVectorKernel(DataType type, ElementwiseOp op, int64_t count, int64_t pa,
                                         int64_t pb, const char* name) {
  return makeTypedKernel<FloatIntOrBoolTypes>(
      type, [=](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        constexpr int kN = VectorBinary<T>::kN;
        const uintptr_t addresses = reinterpret_cast<uintptr_t>(in[0]) |
                                    reinterpret_cast<uintptr_t>(in[1]) |
                                    reinterpret_cast<uintptr_t>(out[0]);
        const bool vec = addresses % 16 == 0 && pa % kN == 0 && pb % kN == 0;
        VectorBinary<T> f{static_cast<const T*>(in[0]),
                          static_cast<const T*>(in[1]),
                          out[0],
                          count,
                          pa,
                          pb,
                          op,
                          isComparison(op),
                          vec};
        return launchElements(f, (count + kN - 1) / kN, ctx, name);
      });
}

// numpy broadcasting: the output's logical index i is split into coordinates, each input and
// the output are addressed through per-dim memory strides (0 where an input is broadcast).
struct BroadcastGeometry {
  int32_t rank = 0;
  int64_t dims[Dims::kMaxDims] = {};
  int64_t sa[Dims::kMaxDims] = {}, sb[Dims::kMaxDims] = {}, so[Dims::kMaxDims] = {};
};

template <class T>
struct BroadcastBinary {
  const T* a;
  const T* b;
  void* out;
  BroadcastGeometry g;
  ElementwiseOp op;
  bool cmp;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t oa = 0, ob = 0, oo = 0, rem = i;
#pragma unroll
    for (int32_t k = Dims::kMaxDims - 1; k >= 0; --k) {
      if (k < g.rank) {
        const int64_t c = rem % g.dims[k];
        rem /= g.dims[k];
        oa += c * g.sa[k];
        ob += c * g.sb[k];
        oo += c * g.so[k];
      }
    }
    applyBinary<T>(op, cmp, a[oa], b[ob], out, oo);
  }
};

// What every elementwise tactic checks.
const ElementwiseParams* checkElementwise(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = config_checks::validate<ElementwiseParams>(
      c, DeviceKind::kCUDA, "elementwise", 2, &ops::Elementwise::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  const bool isInt = t == DataType::kINT32 || t == DataType::kINT64;
  if (!isFloatType(t) && !isInt && t != DataType::kBOOL) {
    fail(whyNot, std::string("elementwise: the CUDA kernels support fp32, fp16, bf16, int32, "
                             "int64 (and bool for equal and the logical ops), got ") +
                     dataTypeName(t));
    return nullptr;
  }
  if ((isInt && ops::elementwise::isFloatOnly(p->op)) ||
      (!isInt && ops::elementwise::isIntegerOnly(p->op))) {
    fail(whyNot, std::string("elementwise: ") + ops::elementwise::opName(p->op) +
                     " is not defined on " + dataTypeName(t));
    return nullptr;
  }
  return p;  // bool: inference already allows only equal and the logical ops
}

// out[i] = a[i * sa] op b[i * sb] over `count` elements (sa, sb in {0, 1}).
std::unique_ptr<Kernel> makeFlatKernel(DataType type, ElementwiseOp op, int64_t count, int64_t sa,
                                       int64_t sb) {
  return makeTypedKernel<FloatIntOrBoolTypes>(
      type, [=](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        FlatBinary<T> f{static_cast<const T*>(in[0]),
                        static_cast<const T*>(in[1]),
                        out[0],
                        sa,
                        sb,
                        op,
                        isComparison(op)};
        return launchElements(f, count, ctx, "elementwise_flat");
      });
}

// Same dims and the same memory layout as the output (so the flat index addresses both).
bool sameLayoutAsOutput(const KernelConfig& c, size_t input) {
  const PluginTensorDesc& d = c.inputs[input];
  const PluginTensorDesc& o = c.outputs[0];
  if (d.dims != o.dims) return false;
  return d.format == o.format || (isRowMajor(d) && isRowMajor(o));
}

std::unique_ptr<Kernel> createSameShape(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  if (!sameLayoutAsOutput(c, 0) || !sameLayoutAsOutput(c, 1)) {
    fail(whyNot, "same_shape: the inputs " + dimsString(c.inputs[0].dims) + " " +
                     formatName(c.inputs[0].format) + " and " + dimsString(c.inputs[1].dims) + " " +
                     formatName(c.inputs[1].format) +
                     " do not both have the output's dims and layout");
    return nullptr;
  }
  const int64_t n = volume(c.outputs[0].dims);
  return makeVectorKernel(c.inputs[0].type, p->op, n, n, n, "elementwise_same_shape");
}

// The period of input `k` when, aligned to the output's rank, its dims are 1 up to some axis and
// the output's from there on (so it repeats every P contiguous output elements); 0 otherwise.
int64_t rowPeriod(const KernelConfig& c, size_t k) {
  const Dims& d = c.inputs[k].dims;
  const Dims& o = c.outputs[0].dims;
  if (c.inputs[k].format != TensorFormat::kLINEAR && !isRowMajor(c.inputs[k])) return 0;
  const int32_t shift = o.nbDims - d.nbDims;
  int64_t period = 1;
  bool suffix = true;  // still in the trailing dims that equal the output's
  for (int32_t i = o.nbDims - 1; i >= 0; --i) {
    const int64_t di = i - shift >= 0 ? d.d[i - shift] : 1;
    if (suffix && di == o.d[i]) {
      period *= di;
      continue;
    }
    suffix = false;
    if (di != 1) return 0;
  }
  return period;
}

std::unique_ptr<Kernel> createRowBroadcast(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  const int64_t n = volume(c.outputs[0].dims);
  if (!isRowMajor(c.outputs[0])) {
    fail(whyNot, "row_broadcast: the output is not row-major (" +
                     std::string(formatName(c.outputs[0].format)) + " " +
                     dimsString(c.outputs[0].dims) + ")");
    return nullptr;
  }
  for (size_t full = 0; full < 2; ++full) {
    const size_t other = 1 - full;
    if (!sameLayoutAsOutput(c, full)) continue;
    const int64_t period = rowPeriod(c, other);
    if (period > 0 && period < n) {
      const int64_t pa = full == 0 ? n : period, pb = full == 0 ? period : n;
      return makeVectorKernel(c.inputs[0].type, p->op, n, pa, pb, "elementwise_row_broadcast");
    }
  }
  fail(whyNot, "row_broadcast: neither input has the output's dims and layout with the other " +
                   dimsString(c.inputs[0].dims) + " / " + dimsString(c.inputs[1].dims) +
                   " broadcast along leading dims only (1s, then the output's trailing dims)");
  return nullptr;
}

std::unique_ptr<Kernel> createScalar(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  const int64_t n = volume(c.outputs[0].dims);
  if (volume(c.inputs[0].dims) == 1 && sameLayoutAsOutput(c, 1))
    return makeFlatKernel(c.inputs[0].type, p->op, n, 0, 1);
  if (volume(c.inputs[1].dims) == 1 && sameLayoutAsOutput(c, 0))
    return makeFlatKernel(c.inputs[0].type, p->op, n, 1, 0);
  fail(whyNot,
       "scalar_broadcast: neither input is a single value broadcast over the other, which has "
       "the output's dims and layout (" +
           dimsString(c.inputs[0].dims) + " and " + dimsString(c.inputs[1].dims) + ")");
  return nullptr;
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const ElementwiseParams* p = checkElementwise(c, whyNot);
  if (!p) return nullptr;
  const Dims& o = c.outputs[0].dims;
  BroadcastGeometry g;
  g.rank = o.nbDims;
  for (int32_t i = 0; i < o.nbDims; ++i) g.dims[i] = o.d[i];
  memoryStrides(c.outputs[0], g.so);
  int64_t* inStrides[2] = {g.sa, g.sb};
  for (int k = 0; k < 2; ++k) {
    int64_t own[Dims::kMaxDims] = {};
    memoryStrides(c.inputs[k], own);
    ops::elementwise::broadcastStrides(c.inputs[k].dims, own, o.nbDims, inStrides[k]);
  }
  const ElementwiseOp op = p->op;
  const int64_t count = volume(o);
  return makeTypedKernel<FloatIntOrBoolTypes>(
      c.inputs[0].type,
      [op, count, g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        BroadcastBinary<T> f{static_cast<const T*>(in[0]),
                             static_cast<const T*>(in[1]),
                             out[0],
                             g,
                             op,
                             isComparison(op)};
        return launchElements(f, count, ctx, "elementwise_broadcast");
      });
}

constexpr Tactic kTactics[] = {{"same_shape", &createSameShape},
                               {"row_broadcast", &createRowBroadcast},
                               {"scalar_broadcast", &createScalar},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::elementwise

std::span<const kiln::Tactic> kiln::ops::Elementwise::cudaTactics() {
  return cuda::elementwise::kTactics;
}
