// The kernel around the per-element reference functors of convolution and deconvolution
// (src/ops/convolution/convolution_cuda.cu, src/ops/deconvolution/deconvolution_cuda.cu): both
// read x, the weights and an optional bias and write one output element of y per index.
#pragma once

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/float_layer_checks.h"

namespace kiln::cuda {

// Op<T>{x, w, bias, y, geometry} is the element function for storage type T; `name` names the
// launch in errors.
template <template <typename> class Op>
class ConvReferenceKernel final : public Kernel {
 public:
  ConvReferenceKernel(const ConvGeometry& g, const char* name) : g_(g), name_(name) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = unsupportedFloatType(g_.type);
    const int64_t count = g_.n * g_.k * g_.oh * g_.ow;
    dispatchFloat(g_.type, [&](auto tag) {
      using T = decltype(tag);
      const T* x = static_cast<const T*>(in[0]);
      const T* w = static_cast<const T*>(in[1]);
      const T* bias = g_.hasBias ? static_cast<const T*>(in[2]) : nullptr;
      T* y = static_cast<T*>(out[0]);
      s = launchElements(Op<T>{x, w, bias, y, g_}, count, ctx, name_);
    });
    return s;
  }

 private:
  ConvGeometry g_;
  const char* name_;
};

}  // namespace kiln::cuda
