// The configuration check of the CUDA tactics of convolution, deconvolution, pooling, matrix
// multiply and gemm (src/ops/<op>/<op>_cuda.*): every tensor in CUDA device memory and of one
// float type (FP32, FP16 or BF16; the kernels compute in FP32), linear, or channels-last for
// input 0 and the output of the spatial layers, and the output exactly what shape inference
// gives. A plan may be corrupted, so a tactic accepts only such a configuration: run() then
// trusts every dim. Plain C++ (no CUDA header).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// The checks after the params: false with *whyNot = "<tactic>: <reason>" when the configuration
// is not one `layer`'s float kernels run. `spatial`: input 0 and the output may be channels-last
// (rank 4, the same format), and so may an input of exactly the output's dims (a convolution's
// residual), in the output's format; the weights (input 1) too when `weightsMayBeChannelsLast`;
// every other input (bias, matrices) must be linear.
bool checkFloatLayer(const KernelConfig& c, LayerType type, const char* layer, const char* tactic,
                     bool spatial, std::string* whyNot, bool weightsMayBeChannelsLast = false);

// The layer's params P when the configuration is `type`'s and passes checkFloatLayer, else
// nullptr with *whyNot.
template <class P>
const P* validateFloatLayer(const KernelConfig& c, LayerType type, const char* layer,
                            const char* tactic, bool spatial, std::string* whyNot,
                            bool weightsMayBeChannelsLast = false) {
  const P* p = std::get_if<P>(&c.params);
  if (!p || c.type != type) {
    if (whyNot) *whyNot = std::string(tactic) + ": not a " + layer + " configuration";
    return nullptr;
  }
  return checkFloatLayer(c, type, layer, tactic, spatial, whyNot, weightsMayBeChannelsLast)
             ? p
             : nullptr;
}

// The fields of the geometry of a spatial layer (convolution, deconvolution, pooling) that come
// from a validated configuration's input 0 [n, c, h, w] and output [., ., oh, ow]: G has type,
// channelsLast, n, c, h, w, oh and ow.
template <class G>
void fillSpatialGeometry(const KernelConfig& c, G* g) {
  const Dims& x = c.inputs[0].dims;
  const Dims& y = c.outputs[0].dims;
  g->type = c.inputs[0].type;
  g->channelsLast = c.inputs[0].format == TensorFormat::kCHANNELS_LAST;
  g->n = x.d[0];
  g->c = x.d[1];
  g->h = x.d[2];
  g->w = x.d[3];
  g->oh = y.d[2];
  g->ow = y.d[3];
}

// Whether a dim or size fits the int that cuDNN and cuBLAS take.
inline bool fitsInt32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

}  // namespace kiln::cuda
