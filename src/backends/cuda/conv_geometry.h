// The geometry that the CUDA tactics of convolution and deconvolution work from: their reference
// kernels (src/ops/convolution/convolution_cuda.cu, src/ops/deconvolution/deconvolution_cuda.cu)
// and the cuDNN tactic both share (cudnn_convolution.cpp). Filled from a validated configuration
// (float_layer_checks.h) by readConvGeometry. Plain C++ (no CUDA header): trivially copyable, so
// the element functors carry it to the device by value.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/kernel.h"
#include "ops/convolution/convolution_semantics.h"

namespace kiln::cuda {

// Input x [n, c, h, w], output y [n, k, oh, ow] and a convolution's residual (of y's shape), all in
// the same format; weights linear, or channels-last where a tactic takes them so (the builder
// reformats constant weights once, at build time): convolution [k, cg, kh, kw], deconvolution
// [c, kg, kh, kw].
struct ConvGeometry {
  DataType type = DataType::kFLOAT;
  bool channelsLast = false;
  bool weightsChannelsLast = false;
  bool hasBias = false;
  int32_t residual = -1;  // a convolution's residual input index, -1 without one
  // A convolution's fused activation (kiln/ops/convolution.h); deconvolution has none.
  bool hasActivation = false;
  ActivationType activation = ActivationType::kRELU;
  float activationAlpha = 0.f, activationBeta = 0.f;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t k = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  int64_t groups = 1, cg = 0, kg = 0;  // channels per group: input, output
  int64_t outPadH = 0, outPadW = 0;    // deconvolution only
};

// The part both layers share, from input 0, the output and the params P (ConvolutionParams or
// DeconvolutionParams) of a configuration that passed validation.
template <class P>
void fillConvGeometry(const KernelConfig& c, const P& p, ConvGeometry* g) {
  fillSpatialGeometry(c, g);
  g->weightsChannelsLast = c.inputs[1].format == TensorFormat::kCHANNELS_LAST;
  if constexpr (std::is_same_v<P, ConvolutionParams>) {
    const ops::convolution::InputSlots slots(p, static_cast<int64_t>(c.inputs.size()));
    g->hasBias = slots.bias >= 0;
    g->residual = slots.residual;
    g->hasActivation = p.hasActivation;
    g->activation = p.activation;
    g->activationAlpha = p.activationAlpha;
    g->activationBeta = p.activationBeta;
  } else {
    g->hasBias = c.inputs.size() == 3;
  }
  g->k = c.outputs[0].dims.d[1];
  g->kh = p.kernelH;
  g->kw = p.kernelW;
  g->sh = p.strideH;
  g->sw = p.strideW;
  g->dh = p.dilationH;
  g->dw = p.dilationW;
  g->padTop = p.padTop;
  g->padLeft = p.padLeft;
  g->padBottom = p.padBottom;
  g->padRight = p.padRight;
  g->groups = p.groups;
  g->cg = g->c / p.groups;
  g->kg = g->k / p.groups;
}

// True with *g filled when the configuration is one that the CUDA tactics of a convolution (P =
// ConvolutionParams) or a deconvolution (DeconvolutionParams) can run (float_layer_checks.h), else
// false with *whyNot prefixed by `tactic`. `weightsChannelsLast`: the tactic also takes the
// weights channels-last.
template <class P>
bool readConvGeometry(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                      std::string* whyNot, bool weightsChannelsLast = false) {
  constexpr bool kDeconv = std::is_same_v<P, DeconvolutionParams>;
  const P* p = validateFloatLayer<P>(
      c, kDeconv ? LayerType::kDECONVOLUTION : LayerType::kCONVOLUTION,
      kDeconv ? "deconvolution" : "convolution", tactic, true, whyNot, weightsChannelsLast);
  if (!p) return false;
  fillConvGeometry(c, *p, g);
  if constexpr (kDeconv) {
    g->outPadH = p->outputPaddingH;
    g->outPadW = p->outputPaddingW;
  }
  return true;
}

}  // namespace kiln::cuda
