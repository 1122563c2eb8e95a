// Elementwise binary ops on CUDA: per-element functions (emulatable on the host). Tactics,
// fastest first:
//   same_shape       both inputs have the output's dims and memory layout: out[i] = a[i] op b[i]
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
using ops::elementwise::isComparison;

// a op b for an arithmetic op, V float (fp32, fp16, bf16 computed in fp32) or int32/int64 (no
// pow or prelu on integers, no mod on floats: the tactics decline them).
template <class V>
__host__ __device__ inline V binary(ElementwiseOp op, V a, V b) {
  switch (op) {
    case ElementwiseOp::kADD:
      return apply<ElementwiseOp::kADD>(a, b);
    case ElementwiseOp::kSUB:
      return apply<ElementwiseOp::kSUB>(a, b);
    case ElementwiseOp::kMUL:
      return apply<ElementwiseOp::kMUL>(a, b);
    case ElementwiseOp::kDIV:
      return apply<ElementwiseOp::kDIV>(a, b);
    case ElementwiseOp::kMAX:
      return apply<ElementwiseOp::kMAX>(a, b);
    case ElementwiseOp::kMIN:
      return apply<ElementwiseOp::kMIN>(a, b);
    case ElementwiseOp::kPOW:
      if constexpr (std::is_floating_point_v<V>) return apply<ElementwiseOp::kPOW>(a, b);
      break;
    case ElementwiseOp::kPRELU:
      if constexpr (std::is_floating_point_v<V>) return apply<ElementwiseOp::kPRELU>(a, b);
      break;
    case ElementwiseOp::kFMOD:
      return apply<ElementwiseOp::kFMOD>(a, b);
    case ElementwiseOp::kMOD:
      if constexpr (!std::is_floating_point_v<V>) return apply<ElementwiseOp::kMOD>(a, b);
      break;
    default:
      break;
  }
  return 0;
}

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
      static_cast<T*>(out)[at] = binary<T>(op, a, b);
  } else {
    const float x = toFloat(a), y = toFloat(b);
    if (cmp)
      static_cast<uint8_t*>(out)[at] = compare<float>(op, x, y);
    else
      static_cast<T*>(out)[at] = fromFloat<T>(binary<float>(op, x, y));
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
  return makeFlatKernel(c.inputs[0].type, p->op, volume(c.outputs[0].dims), 1, 1);
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
                               {"scalar_broadcast", &createScalar},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::elementwise

std::span<const kiln::Tactic> kiln::ops::Elementwise::cudaTactics() {
  return cuda::elementwise::kTactics;
}
