// Activations on CUDA. Tactics, fastest first; both take input and output in the same layout
// (an activation is per element, so the flat memory order is all they see) and both are
// per-element functions, emulatable on the host:
//   vectorized  the activation type a template parameter (no per-element switch), two 16-byte
//               vectors per thread (16 fp16/bf16, 8 fp32/int32, 4 int64, 32 bool) where X and Y
//               are 16-byte aligned, the last count % 16 (8, ...) elements one at a time;
//               values bit for bit the reference's (the same activate<kType> of
//               activation_semantics.h), except the erf GELU rounded to FP16/BF16:
//               geluForHalfResult, within one unit in the last place of the exact value
//   reference   one element per thread over the flat index, the type a run-time switch (the
//               same values as vectorized, the FP16/BF16 erf GELU included)
//
// Value rules: activation_semantics.h, the CPU's (activation_cpu.cpp). Every activation on the
// float types, computed in fp32 and rounded once on store; neg/abs on int32/int64 (wrapping);
// not on bool.
#include <cstdint>
#include <type_traits>

#include "backends/config_checks.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "backends/cuda/vector_access.cuh"
#include "ops/activation/activation_cuda.h"
#include "ops/activation/activation_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::activation {
namespace {

using config_checks::fail;

template <class T>
struct ActivationOp {
  const T* x;
  T* y;
  ActivationType type;
  float alpha, beta;
  __host__ __device__ void operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, uint8_t>) {
      y[i] = ops::activation::logicalNot(x[i]);
    } else if constexpr (std::is_integral_v<T>) {
      const T v = x[i];
      y[i] =
          type == ActivationType::kABS ? ops::activation::wrapAbs(v) : ops::activation::wrapNeg(v);
    } else {
      // The type is a kernel argument (a warp-uniform switch), not a template parameter: one
      // kernel per storage type. The FP16/BF16 erf GELU is the vectorized tactic's, so that the
      // two tactics agree bit for bit.
      const float v = toFloat(x[i]);
      y[i] = fromFloat<T>(!std::is_same_v<T, float> && type == ActivationType::kGELU
                              ? ops::activation::geluForHalfResult(v)
                              : ops::activation::activateByType(type, v, alpha, beta));
    }
  }
};

// The checks both tactics make: the layer's params, or nullptr and *whyNot.
const ActivationParams* check(const KernelConfig& c, const char* tactic, std::string* whyNot) {
  const ActivationParams* p = config_checks::validate<ActivationParams>(
      c, DeviceKind::kCUDA, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  // Inference admits: any activation on float types; neg/abs on int32/int64; not on bool.
  if (!isFloatType(t) && t != DataType::kINT32 && t != DataType::kINT64 && t != DataType::kBOOL) {
    fail(whyNot, std::string("activation ") + tactic + ": unsupported type " + dataTypeName(t));
    return nullptr;
  }
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.format != y.format && !(isRowMajor(x) && isRowMajor(y))) {
    fail(whyNot, std::string("activation ") + tactic + ": input is " + formatName(x.format) +
                     " but output is " + formatName(y.format) +
                     "; the kernel needs one layout for both");
    return nullptr;
  }
  return p;
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p = check(c, "reference", whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  const int64_t count = volume(c.inputs[0].dims);
  return makeTypedKernel<FloatIntOrBoolTypes>(
      t, [params = *p, count](auto tag, const void* const* in, void* const* out,
                              const RunContext& ctx) {
        using T = decltype(tag);
        ActivationOp<T> f{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), params.type,
                          params.alpha, params.beta};
        return launchElements(f, count, ctx, "activation");
      });
}

// ---- vectorized ----

// One element of storage type T under activation kType: the reference's arithmetic, with the
// type fixed at compile time; the erf GELU rounded to FP16 or BF16 from geluForHalfResult.
template <ActivationType kType, class T>
__host__ __device__ inline T activateOne(T v, float alpha, float beta) {
  namespace a = ops::activation;
  if constexpr (std::is_same_v<T, uint8_t>)
    return a::logicalNot(v);
  else if constexpr (std::is_integral_v<T>)
    return kType == ActivationType::kABS ? a::wrapAbs(v) : a::wrapNeg(v);
  else if constexpr (kType == ActivationType::kGELU && !std::is_same_v<T, float>)
    return fromFloat<T>(a::geluForHalfResult(toFloat(v)));  // as close once rounded, half the work
  else
    return fromFloat<T>(a::activate<kType>(toFloat(v), alpha, beta));
}

// Index i < pairs: the 16-byte vectors 2i and 2i + 1 of X into Y's, both loaded before either is
// computed (two loads in flight per thread: the FP16 erf GELU after a transformer's fc1 is long
// enough between load and store that one left the memory system idle); pairs <= i < pairs + rest:
// element pairs * 2N + (i - pairs), one at a time (the odd vector's and the count's remainder, or
// every element when a pointer is not 16-byte aligned and pairs is 0). x == y is allowed: each
// vector or element is read before its own store and by no other index.
template <ActivationType kType, class T>
struct VectorActivationOp {
  static constexpr int N = kVectorElements<T>;
  const T* x;
  T* y;
  int64_t pairs;
  float alpha, beta;
  __host__ __device__ void operator()(int64_t i) const {
    if (i < pairs) {
      Vec<T, N> p[2] = {loadVec<N>(x + i * 2 * N), loadVec<N>(x + i * 2 * N + N)};
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int k = 0; k < N; ++k) p[h].v[k] = activateOne<kType>(p[h].v[k], alpha, beta);
      storeVec<N>(y + i * 2 * N, p[0]);
      storeVec<N>(y + i * 2 * N + N, p[1]);
    } else {
      const int64_t e = pairs * 2 * N + (i - pairs);
      y[e] = activateOne<kType>(x[e], alpha, beta);
    }
  }
};

template <ActivationType kType, class T>
Status launchVectorized(const T* x, T* y, int64_t count, float alpha, float beta,
                        const RunContext& ctx) {
  constexpr int N = kVectorElements<T>;
  const int64_t pairs = isAligned(x) && isAligned(y) ? count / (2 * N) : 0;
  const int64_t rest = count - pairs * 2 * N;
  return launchElements(VectorActivationOp<kType, T>{x, y, pairs, alpha, beta}, pairs + rest, ctx,
                        "activation_vectorized");
}

// The vectorized launch for a type known at run time: one instantiation per activation that
// storage type T has (every float form on float types, neg and abs on integers, not on bool).
template <class T>
Status launchVectorizedByType(const ActivationParams& p, const T* x, T* y, int64_t count,
                              const RunContext& ctx) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return launchVectorized<ActivationType::kNOT>(x, y, count, p.alpha, p.beta, ctx);
  } else if constexpr (std::is_integral_v<T>) {
    if (p.type == ActivationType::kABS)
      return launchVectorized<ActivationType::kABS>(x, y, count, p.alpha, p.beta, ctx);
    return launchVectorized<ActivationType::kNEG>(x, y, count, p.alpha, p.beta, ctx);
  } else {
    switch (p.type) {
#define KILN_VECTORIZED_CASE(kTYPE) \
  case ActivationType::kTYPE:       \
    return launchVectorized<ActivationType::kTYPE>(x, y, count, p.alpha, p.beta, ctx);
      KILN_FLOAT_ACTIVATIONS(KILN_VECTORIZED_CASE)
#undef KILN_VECTORIZED_CASE
      case ActivationType::kNOT:
        break;
    }
    return internalError("activation vectorized: not has no float form");
  }
}

std::unique_ptr<Kernel> createVectorized(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p = check(c, "vectorized", whyNot);
  if (!p) return nullptr;
  const int64_t count = volume(c.inputs[0].dims);
  return makeTypedKernel<FloatIntOrBoolTypes>(
      c.inputs[0].type, [params = *p, count](auto tag, const void* const* in, void* const* out,
                                             const RunContext& ctx) {
        using T = decltype(tag);
        return launchVectorizedByType<T>(params, static_cast<const T*>(in[0]),
                                         static_cast<T*>(out[0]), count, ctx);
      });
}

constexpr Tactic kTactics[] = {{"vectorized", &createVectorized}, {"reference", &createReference}};

}  // namespace

// The vectorized kernel (16-byte accesses when x and y are aligned, one element at a time
// otherwise): the values are the vectorized tactic's either way (the reference's bit for bit but
// for the FP16/BF16 erf GELU, see the top).
Status launchFloatActivation(const ActivationParams& p, DataType type, const void* x, void* y,
                             int64_t count, const RunContext& ctx) {
  return launchTyped<FloatTypes>(type, [&](auto tag) {
    using T = decltype(tag);
    return launchVectorizedByType<T>(p, static_cast<const T*>(x), static_cast<T*>(y), count, ctx);
  });
}

}  // namespace kiln::cuda::activation

std::span<const kiln::Tactic> kiln::ops::Activation::cudaTactics() {
  return cuda::activation::kTactics;
}
