// Validation shared by the tactics of the light built-in layers. A plan may be corrupted, so a
// tactic only makes a kernel when the configuration is exactly what shape inference says it must
// be: then run() can trust every dim and never reads or writes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln::cpu::light {

using kiln::light::dimsString;

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

template <class P>
using InferFn = Status (*)(const P&, const std::vector<TensorShape>&, std::vector<TensorShape>&);

// Returns the layer's parameters when the configuration is consistent: the params alternative is
// P, tensors are on the CPU with valid formats (channels-last only at rank 4), `nbInputs` inputs
// (-1: any number) and one output, and the outputs match what `infer` computes from the inputs.
// Otherwise nullptr with *whyNot set.
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, InferFn<P> infer,
                  std::string* whyNot) {
  const P* p = std::get_if<P>(&c.params);
  if (!p) {
    setWhyNot(whyNot, std::string(layer) + ": the configuration holds another layer's params");
    return nullptr;
  }
  if (nbInputs >= 0 && c.inputs.size() != static_cast<size_t>(nbInputs)) {
    setWhyNot(whyNot, std::string(layer) + ": expects " + std::to_string(nbInputs) +
                          " input(s), got " + std::to_string(c.inputs.size()));
    return nullptr;
  }
  if (c.outputs.size() != 1) {
    setWhyNot(whyNot,
              std::string(layer) + ": expects 1 output, got " + std::to_string(c.outputs.size()));
    return nullptr;
  }
  auto descOk = [&](const PluginTensorDesc& d) {
    if (d.device != DeviceKind::kCPU) {
      setWhyNot(whyNot, std::string(layer) + ": the CPU backend needs tensors in host memory");
      return false;
    }
    if (d.format != TensorFormat::kLINEAR && d.format != TensorFormat::kCHANNELS_LAST) {
      setWhyNot(whyNot, std::string(layer) + ": invalid tensor format " +
                            std::to_string(static_cast<int32_t>(d.format)));
      return false;
    }
    if (d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims != 4) {
      setWhyNot(whyNot, std::string(layer) + ": channels_last needs rank 4, got dims " +
                            dimsString(d.dims));
      return false;
    }
    return true;
  };
  for (const auto& d : c.inputs)
    if (!descOk(d)) return nullptr;
  if (!descOk(c.outputs[0])) return nullptr;
  std::vector<TensorShape> in;
  for (const auto& x : c.inputs) in.push_back(TensorShape{x.dims, x.type});
  std::vector<TensorShape> expected;
  const Status st = infer(*p, in, expected);
  if (!st.isOk()) {
    setWhyNot(whyNot, st.message());
    return nullptr;
  }
  if (expected.size() != 1 || expected[0].dims != c.outputs[0].dims ||
      expected[0].type != c.outputs[0].type) {
    setWhyNot(whyNot, std::string(layer) + ": output is " + dataTypeName(c.outputs[0].type) + " " +
                          dimsString(c.outputs[0].dims) + " but the inputs give " +
                          (expected.empty() ? std::string("nothing")
                                            : std::string(dataTypeName(expected[0].type)) + " " +
                                                  dimsString(expected[0].dims)));
    return nullptr;
  }
  return p;
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
