// Activations on CUDA. One tactic, "reference": input and output in the same layout, a
// per-element function over the flat index (emulatable on the host).
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
      // kernel per storage type.
      y[i] = fromFloat<T>(ops::activation::activateByType(type, toFloat(x[i]), alpha, beta));
    }
  }
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const ActivationParams* p = config_checks::validate<ActivationParams>(
      c, DeviceKind::kCUDA, "activation", 1, &ops::Activation::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  // Inference admits: any activation on float types; neg/abs on int32/int64; not on bool.
  if (!isFloatType(t) && t != DataType::kINT32 && t != DataType::kINT64 && t != DataType::kBOOL) {
    fail(whyNot, std::string("activation: unsupported type ") + dataTypeName(t));
    return nullptr;
  }
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  if (x.format != y.format && !(isRowMajor(x) && isRowMajor(y))) {
    fail(whyNot, std::string("activation: input is ") + formatName(x.format) + " but output is " +
                     formatName(y.format) + "; the kernel needs one layout for both");
    return nullptr;
  }
  const int64_t count = volume(x.dims);
  return makeTypedKernel<FloatIntOrBoolTypes>(
      t, [params = *p, count](auto tag, const void* const* in, void* const* out,
                              const RunContext& ctx) {
        using T = decltype(tag);
        ActivationOp<T> f{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), params.type,
                          params.alpha, params.beta};
        return launchElements(f, count, ctx, "activation");
      });
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace

Status launchFloatActivation(const ActivationParams& p, DataType type, const void* x, void* y,
                             int64_t count, const RunContext& ctx) {
  return launchTyped<FloatTypes>(type, [&](auto tag) {
    using T = decltype(tag);
    ActivationOp<T> f{static_cast<const T*>(x), static_cast<T*>(y), p.type, p.alpha, p.beta};
    return launchElements(f, count, ctx, "activation");
  });
}

}  // namespace kiln::cuda::activation

std::span<const kiln::Tactic> kiln::ops::Activation::cudaTactics() {
  return cuda::activation::kTactics;
}
