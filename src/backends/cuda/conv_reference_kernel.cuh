// The kernel around a per-element reference functor that reads x, the weights and an optional bias
// and writes one output element of y per index: deconvolution's
// (src/ops/deconvolution/deconvolution_cuda.cu). Convolution's reads a residual too and has its
// own launch (src/ops/convolution/convolution_cuda.cu).
#pragma once

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/typed_kernel.cuh"

namespace kiln::cuda {

// Op<T>{x, w, bias, y, geometry} is the element function for storage type T; `name` names the
// launch in errors.
template <template <typename> class Op>
std::unique_ptr<Kernel> makeConvReferenceKernel(const ConvGeometry& g, const char* name) {
  return makeTypedKernel<FloatTypes>(
      g.type, [g, name](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        const T* x = static_cast<const T*>(in[0]);
        const T* w = static_cast<const T*>(in[1]);
        const T* bias = g.hasBias ? static_cast<const T*>(in[2]) : nullptr;
        T* y = static_cast<T*>(out[0]);
        return launchElements(Op<T>{x, w, bias, y, g}, g.n * g.k * g.oh * g.ow, ctx, name);
      });
}

// The "reference" tactic of convolution (P = ConvolutionParams) or deconvolution
// (DeconvolutionParams), whose element function is Op.
template <class P, template <typename> class Op>
std::unique_ptr<Kernel> createConvReference(const KernelConfig& c, const char* name,
                                            std::string* whyNot) {
  ConvGeometry g;
  if (!readConvGeometry<P>(c, "reference", &g, whyNot)) return nullptr;
  return makeConvReferenceKernel<Op>(g, name);
}

}  // namespace kiln::cuda
