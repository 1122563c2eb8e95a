// Validation shared by the tactics of the light built-in layers. A plan may be corrupted, so a
// tactic only makes a kernel when the configuration is exactly what shape inference says it must
// be: then run() can trust every dim and never reads or writes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/config_checks.h"
#include "backends/cpu/kernel.h"
#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln::cpu::light {

using kiln::light::dimsString;

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

template <class P>
using InferFn = config_checks::InferFn<P>;

// Returns the layer's parameters when the configuration is consistent: the params alternative is
// P, tensors are on the CPU with valid formats (channels-last only at rank 4), `nbInputs` inputs
// (-1: any number) and one output, and the outputs match what `infer` computes from the inputs.
// Otherwise nullptr with *whyNot set.
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, InferFn<P> infer,
                  std::string* whyNot) {
  return config_checks::validate(c, DeviceKind::kCPU, layer, nbInputs, infer, whyNot);
}

// Built-in layers other than reformat work on linear tensors only.
inline bool allLinear(const KernelConfig& c, const char* layer, std::string* whyNot) {
  for (const auto& v : {&c.inputs, &c.outputs})
    for (const auto& d : *v)
      if (d.format != TensorFormat::kLINEAR) {
        setWhyNot(whyNot,
                  std::string(layer) + ": needs linear tensors, got " + formatName(d.format));
        return false;
      }
  return true;
}

// Strides of a row-major tensor, in elements.
inline void rowMajorStrides(const Dims& d, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    strides[i] = s;
    s *= d.d[i];
  }
}

}  // namespace kiln::cpu::light
