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

#include "backends/config_checks.h"
#include "backends/cuda/kernel.h"
#include "ops/op_table.h"
#include "ops/shape_checks.h"

namespace kiln::cuda::math {

inline void setWhyNot(std::string* whyNot, std::string message) {
  if (whyNot) *whyNot = std::move(message);
}

template <class P>
using InferFn = config_checks::InferFn<P>;

// The layer's params when the configuration is consistent: params alternative P, `nbInputs`
// inputs and one output, every tensor on the CUDA device in linear or (rank 4) channels-last
// format, and the output exactly what `infer` computes from the inputs. Else nullptr + *whyNot.
template <class P>
const P* validate(const KernelConfig& c, const char* layer, int nbInputs, InferFn<P> infer,
                  std::string* whyNot) {
  return config_checks::validate(c, DeviceKind::kCUDA, layer, nbInputs, infer, whyNot);
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
