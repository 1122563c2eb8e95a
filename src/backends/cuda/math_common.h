// Shared by the CUDA math family (elementwise, activation, softmax, reduce, instance norm, LRN):
// configuration checks and the tactic entry points. No CUDA header here, so math_tactics.cpp
// compiles as plain C++.
//
// Like the CPU tactics (backends/cpu/light_kernel_util.h), a tactic makes a kernel only when the
// configuration is exactly what shape inference says: a plan may be corrupted, and run() then
// trusts every dim without checking again.
//
// Formats: each tensor is seen as logical dims plus per-dim memory strides (row-major for linear;
// N, H, W, C memory order for rank-4 channels-last). The reference kernels index through those
// strides, so they take any mix of linear and channels-last; the faster tactics ask for the
// memory layouts they were written for and say so when they decline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "backends/cuda/kernel.h"
#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln::cuda::math {

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

template <class P>
using InferFn = Status (*)(const P&, const std::vector<TensorShape>&, std::vector<TensorShape>&);

// The layer's params when the configuration is consistent: params alternative P, `nbInputs`
// inputs and one output, every tensor on the CUDA device in linear or (rank 4) channels-last
// format, and the output exactly what `infer` computes from the inputs. Else nullptr + *whyNot.
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, InferFn<P> infer,
                  std::string* whyNot) {
  const std::string L(layer);
  const P* p = std::get_if<P>(&c.params);
  if (!p) {
    setWhyNot(whyNot, L + ": the configuration holds another layer's params");
    return nullptr;
  }
  if (c.inputs.size() != static_cast<size_t>(nbInputs)) {
    setWhyNot(whyNot, L + ": expects " + std::to_string(nbInputs) + " input(s), got " +
                          std::to_string(c.inputs.size()));
    return nullptr;
  }
  if (c.outputs.size() != 1) {
    setWhyNot(whyNot, L + ": expects 1 output, got " + std::to_string(c.outputs.size()));
    return nullptr;
  }
  auto descOk = [&](const PluginTensorDesc& d) {
    if (d.device != DeviceKind::kCUDA) {
      setWhyNot(whyNot, L + ": the CUDA backend needs tensors in device memory");
      return false;
    }
    if (d.format != TensorFormat::kLINEAR && d.format != TensorFormat::kCHANNELS_LAST) {
      setWhyNot(whyNot,
                L + ": invalid tensor format " + std::to_string(static_cast<int32_t>(d.format)));
      return false;
    }
    if (d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims != 4) {
      setWhyNot(whyNot, L + ": channels_last needs rank 4, got dims " + light::dimsString(d.dims));
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
    setWhyNot(whyNot, L + ": output is " + dataTypeName(c.outputs[0].type) + " " +
                          light::dimsString(c.outputs[0].dims) + " but the inputs give " +
                          (expected.empty() ? std::string("nothing")
                                            : std::string(dataTypeName(expected[0].type)) + " " +
                                                  light::dimsString(expected[0].dims)));
    return nullptr;
  }
  return p;
}

// Memory strides (in elements) of each logical dim.
inline void memoryStrides(const PluginTensorDesc& d, int64_t* s) {
  const Dims& x = d.dims;
  if (d.format == TensorFormat::kCHANNELS_LAST && x.nbDims == 4) {
    const int64_t C = x.d[1], H = x.d[2], W = x.d[3];
    s[0] = H * W * C;
    s[1] = 1;
    s[2] = W * C;
    s[3] = C;
    return;
  }
  int64_t v = 1;
  for (int32_t i = x.nbDims - 1; i >= 0; --i) {
    s[i] = v;
    v *= x.d[i];
  }
}

// True when the tensor's memory order is row-major over its logical dims (linear, or a
// channels-last tensor whose layout coincides, e.g. [N,C,1,1] or [N,1,H,W]).
inline bool isRowMajor(const PluginTensorDesc& d) {
  if (d.format == TensorFormat::kLINEAR) return true;
  int64_t mem[Dims::kMaxDims] = {}, rm[Dims::kMaxDims] = {};
  memoryStrides(d, mem);
  int64_t v = 1;
  for (int32_t i = d.dims.nbDims - 1; i >= 0; --i) {
    rm[i] = v;
    v *= d.dims.d[i];
  }
  for (int32_t i = 0; i < d.dims.nbDims; ++i)
    if (d.dims.d[i] > 1 && mem[i] != rm[i]) return false;
  return true;
}

// Tactic entry points (math_elementwise.cu, math_reduce.cu).
std::unique_ptr<Kernel> createElementwiseSameShape(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createElementwiseScalar(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createElementwiseBroadcast(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createActivation(const KernelConfig& c, std::string* whyNot);

std::unique_ptr<Kernel> createSoftmaxRows(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createSoftmaxReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createReduceRows(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createReduceReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createInstanceNormSlices(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createInstanceNormReference(const KernelConfig& c, std::string* whyNot);
std::unique_ptr<Kernel> createLrnReference(const KernelConfig& c, std::string* whyNot);

}  // namespace kiln::cuda::math
