// The checks every built-in layer's tactic makes before it builds a kernel, shared by the CPU
// backend and the CUDA math and data-movement families. A plan may be corrupted, so a tactic
// only makes a kernel when the configuration is exactly what shape inference says: run() then
// trusts every dim and never reads or writes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/kernel.h"
#include "core/tensor_shape.h"

namespace kiln::config_checks {

inline bool fail(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
  return false;
}

struct TensorRules {
  DeviceKind device = DeviceKind::kCPU;  // where every tensor must be
  int nbInputs = -1;                     // -1: any number
  bool constantsMatchInputs = false;     // constantInputs empty or one per input
  bool linearOnly = false;               // decline channels-last tensors
};

// Input and output counts (one output), then each tensor's device and format: linear, or
// channels-last at rank 4 unless rules.linearOnly. False with *whyNot naming `layer` otherwise.
inline bool checkTensors(const KernelConfig& c, const char* layer, const TensorRules& rules,
                         std::string* whyNot) {
  const std::string name(layer);
  if (rules.nbInputs >= 0 && c.inputs.size() != static_cast<size_t>(rules.nbInputs))
    return fail(whyNot, name + ": expects " + std::to_string(rules.nbInputs) + " input(s), got " +
                            std::to_string(c.inputs.size()));
  if (c.outputs.size() != 1)
    return fail(whyNot, name + ": expects 1 output, got " + std::to_string(c.outputs.size()));
  if (rules.constantsMatchInputs && !c.constantInputs.empty() &&
      c.constantInputs.size() != c.inputs.size())
    return fail(whyNot, name + ": constantInputs does not match the inputs");
  auto descOk = [&](const PluginTensorDesc& d) {
    if (d.device != rules.device)
      return fail(whyNot, name + (rules.device == DeviceKind::kCUDA
                                      ? ": the CUDA backend needs tensors in device memory"
                                      : ": the CPU backend needs tensors in host memory"));
    if (d.format != TensorFormat::kLINEAR && d.format != TensorFormat::kCHANNELS_LAST)
      return fail(whyNot, name + ": invalid tensor format " +
                              std::to_string(static_cast<int32_t>(d.format)));
    if (d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims != 4)
      return fail(whyNot, name + ": channels_last needs rank 4, got dims " + dimsString(d.dims));
    if (d.format == TensorFormat::kCHANNELS_LAST && rules.linearOnly)
      return fail(whyNot, name +
                              ": this kernel moves linear tensors only (got channels_last; the "
                              "builder reformats around it)");
    return true;
  };
  for (const auto& d : c.inputs)
    if (!descOk(d)) return false;
  return descOk(c.outputs[0]);
}

// The shapes of the configuration's inputs, as shape inference takes them.
inline std::vector<TensorShape> inputShapes(const KernelConfig& c) {
  std::vector<TensorShape> in;
  for (const auto& x : c.inputs) in.push_back(TensorShape{x.dims, x.type});
  return in;
}

// Whether the configuration's single output is what shape inference gave (`inferred`, with
// `expected`). False with *whyNot naming `layer` otherwise.
inline bool checkOutput(const KernelConfig& c, const char* layer, const Status& inferred,
                        const std::vector<TensorShape>& expected, std::string* whyNot) {
  if (!inferred.isOk()) return fail(whyNot, inferred.message());
  if (expected.size() != 1 || expected[0].dims != c.outputs[0].dims ||
      expected[0].type != c.outputs[0].type)
    return fail(whyNot, std::string(layer) + ": output is " + dataTypeName(c.outputs[0].type) +
                            " " + dimsString(c.outputs[0].dims) + " but the inputs give " +
                            (expected.empty() ? std::string("nothing")
                                              : std::string(dataTypeName(expected[0].type)) + " " +
                                                    dimsString(expected[0].dims)));
  return true;
}

template <class P>
using InferFn = Status (*)(const P&, const std::vector<TensorShape>&, std::vector<TensorShape>&);

// The layer's params when the configuration is consistent: params alternative P, `nbInputs`
// inputs (-1: any number) and one output, every tensor on `device` in linear or (rank 4)
// channels-last format, and the output exactly what `infer` computes from the inputs. Else
// nullptr with *whyNot set.
template <class P>
const P* validate(const KernelConfig& c, DeviceKind device, const char* layer, int nbInputs,
                  InferFn<P> infer, std::string* whyNot) {
  const P* p = std::get_if<P>(&c.params);
  if (!p) {
    fail(whyNot, std::string(layer) + ": the configuration holds another layer's params");
    return nullptr;
  }
  if (!checkTensors(c, layer, {device, nbInputs}, whyNot)) return nullptr;
  std::vector<TensorShape> expected;
  const Status st = infer(*p, inputShapes(c), expected);
  return checkOutput(c, layer, st, expected, whyNot) ? p : nullptr;
}

}  // namespace kiln::config_checks
