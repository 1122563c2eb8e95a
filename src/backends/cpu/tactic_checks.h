// Validation shared by the CPU tactics of the built-in ops. A plan may be corrupted, so a
// tactic only makes a kernel when the configuration is exactly what shape inference says it must
// be: then run() can trust every dim and never reads or writes out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/config_checks.h"
#include "backends/cpu/kernel.h"
#include "core/tensor_shape.h"

namespace kiln::cpu {

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

// Every tensor is fp32 (the CPU kernels of float ops compute in fp32; the builder converts).
inline bool allFp32(const KernelConfig& c, const char* layer, std::string* whyNot) {
  for (const auto* v : {&c.inputs, &c.outputs})
    for (const auto& d : *v)
      if (d.type != DataType::kFLOAT) {
        setWhyNot(whyNot, std::string(layer) + ": the CPU kernel computes in fp32 only");
        return false;
      }
  return true;
}

// [N, C, rest...] as (batch, channels, spatial elements per channel).
struct ChannelLayout {
  int64_t batch = 0, channels = 0, spatial = 1;
  explicit ChannelLayout(const Dims& d) : batch(d.d[0]), channels(d.d[1]) {
    for (int32_t i = 2; i < d.nbDims; ++i) spatial *= d.d[i];
  }
};

// The fp32 buffers of a run of a layer with inputs 0 and 1, an optional input 2 (nullptr when
// absent) and output 0: convolution and deconvolution (x, weights, bias), gemm (A, B, C).
struct Fp32Buffers {
  const float* in0;
  const float* in1;
  const float* in2;
  float* out;
};
inline Fp32Buffers fp32Buffers(const void* const* inputs, void* const* outputs, bool hasInput2) {
  return {static_cast<const float*>(inputs[0]), static_cast<const float*>(inputs[1]),
          hasInput2 ? static_cast<const float*>(inputs[2]) : nullptr,
          static_cast<float*>(outputs[0])};
}

// The bytes of constant input i (weights), or nullptr when it is not a constant.
inline const void* constantInput(const KernelConfig& config, size_t i) {
  return i < config.constantInputs.size() ? config.constantInputs[i] : nullptr;
}

// For tactics of fp32 linear kernels: every tensor fp32, linear, on the CPU, one output, and the
// output exactly what `infer` (the op's shape rule) gives, so a corrupted plan cannot steer run()
// out of bounds. Else nullptr with *whyNot naming the tactic.
template <typename Params, typename Infer>
const Params* validateFp32Linear(const KernelConfig& config, const char* layer, const char* tactic,
                                 Infer infer, std::string* whyNot) {
  const auto* p = std::get_if<Params>(&config.params);
  if (!p) {
    *whyNot = std::string(tactic) + ": not a " + layer + " configuration";
    return nullptr;
  }
  if (config.outputs.size() != 1) {
    *whyNot = std::string(tactic) + ": " + layer + " has 1 output, config has " +
              std::to_string(config.outputs.size());
    return nullptr;
  }
  std::vector<TensorShape> in;
  for (size_t i = 0; i <= config.inputs.size(); ++i) {
    const bool isOutput = i == config.inputs.size();
    const PluginTensorDesc& d = isOutput ? config.outputs[0] : config.inputs[i];
    if (d.type != DataType::kFLOAT || d.format != TensorFormat::kLINEAR ||
        d.device != DeviceKind::kCPU) {
      *whyNot = (isOutput ? std::string("output 0") : "input " + std::to_string(i)) + " is " +
                dataTypeName(d.type) + " " + formatName(d.format) + "; " + tactic +
                " supports fp32 linear CPU tensors only";
      return nullptr;
    }
    if (!isOutput) in.push_back({d.dims, d.type});
  }
  std::vector<TensorShape> out;
  Status s = infer(*p, in, out);
  if (!s.isOk()) {
    *whyNot = std::string(tactic) + ": " + s.message();
    return nullptr;
  }
  if (out[0].dims != config.outputs[0].dims) {
    *whyNot = std::string(tactic) + ": output dims in the configuration disagree with the inputs";
    return nullptr;
  }
  return p;
}

}  // namespace kiln::cpu
