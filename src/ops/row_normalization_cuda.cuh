// The CUDA tactics of the row normalisations (LayerNormalization, RMSNormalization,
// GroupNormalization), fastest first:
//   block_per_row  one thread block per row, the row's sums by a shared-memory/shuffle reduction;
//                  not emulatable (kUnsupported under RunContext::emulate)
//   reference      one thread per row running the op's StoredRow (its semantics header, the CPU
//                  reference's row function), emulatable on the host
// What the three ops would otherwise repeat is here once: the checks of the configuration, the
// kernel over the float types and the launches. An op's .cu keeps its arithmetic (the block
// kernel) and describes itself to these templates as a struct Op with
//   kLayer                the layer's name, also the prefix of its kernels' names;
//   Geometry              its rows (rows, len);
//   Row                   its semantics' StoredRow;
//   check(c, g, whyNot)   validate the configuration and compute g (false and *whyNot if not);
//   launchRows<T>(blocks, threads, stream, x, scale, bias, y, g)  enqueue its block kernel.
// B is input 2 where the layer has three inputs; bias is nullptr otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/layer_normalization/layer_normalization_semantics.h"

namespace kiln::cuda::row_normalization {

// Every tensor of X's type and linear: rows are contiguous runs of X's row-major order (a
// channels-last tensor has one only when its layout coincides with linear). `params` names the
// inputs after X in the type error ("Scale and B").
inline bool checkTensors(const KernelConfig& c, const char* layer, const char* params,
                         std::string* whyNot) {
  const DataType t = c.inputs[0].type;
  for (const auto* list : {&c.inputs, &c.outputs})
    for (const PluginTensorDesc& d : *list) {
      if (d.type != t)
        return config_checks::fail(whyNot, std::string(layer) + ": " + params +
                                               " must have X's type (" + dataTypeName(t) +
                                               "), got " + dataTypeName(d.type));
      if (d.format != TensorFormat::kLINEAR)
        return config_checks::fail(
            whyNot, std::string(layer) + ": needs linear tensors, got " + formatName(d.format));
    }
  return true;
}

// The CUDA conversions of storage type T, in the form StoredRow takes (cpu::FloatElement's).
template <class T>
struct Element {
  __host__ __device__ static float toFloat(T v) { return cuda::toFloat(v); }
  __host__ __device__ static T fromFloat(float v) { return cuda::fromFloat<T>(v); }
};

// The reference kernel's per-element function: row r.
template <class Op, class T>
struct EachRow {
  const T* x;
  const T* scale;
  const T* bias;  // nullptr without B
  T* y;
  typename Op::Geometry g;
  __host__ __device__ void operator()(int64_t r) const {
    Op::Row::template normalize<Element<T>>(g, r, x + r * g.len, scale, bias, y + r * g.len);
  }
};

// LayerNormalization's first two passes (layer_normalization::rowStatistics) over a row split
// over a block's threads: the same terms, each pass's sum reduced across the block, finished
// with meanOf and invStdDevOf. LayerNormalization's and GroupNormalization's block kernels.
template <class T>
__device__ inline void blockRowStatistics(const T* xr, int64_t len, float epsilon, float& mean,
                                          float& invStdDev) {
  namespace ln = ops::layer_normalization;
  const float x0 = toFloat(xr[0]);
  float shifted = 0.f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) shifted += toFloat(xr[j]) - x0;
  mean = ln::meanOf(x0, blockReduce(shifted, SumF{}), len);
  float squares = 0.f;
  for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
    const float d = toFloat(xr[j]) - mean;
    squares += d * d;
  }
  invStdDev = ln::invStdDevOf(blockReduce(squares, SumF{}), len, epsilon);
}

// A kernel over every float type whose run is launch(T{}, x, scale, bias, y, ctx) for Op's
// geometry g, or nullptr when Op::check refuses the configuration.
template <class Op, class Launch>
std::unique_ptr<Kernel> makeKernel(const KernelConfig& c, std::string* whyNot, Launch launch) {
  typename Op::Geometry g;
  if (!Op::check(c, g, whyNot)) return nullptr;
  const bool hasBias = c.inputs.size() == 3;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type, [g, hasBias, launch](auto tag, const void* const* in, void* const* out,
                                             const RunContext& ctx) {
        using T = decltype(tag);
        return launch(g, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                      hasBias ? static_cast<const T*>(in[2]) : nullptr, static_cast<T*>(out[0]),
                      ctx);
      });
}

template <class Op>
std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const std::string name = std::string(Op::kLayer) + "_reference";
  return makeKernel<Op>(
      c, whyNot,
      [name](const auto& g, const auto* x, const auto* scale, const auto* bias, auto* y,
             const RunContext& ctx) {
        using T = std::remove_pointer_t<decltype(y)>;
        return launchElements(EachRow<Op, T>{x, scale, bias, y, g}, g.rows, ctx, name.c_str());
      });
}

template <class Op>
std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  const std::string tactic = std::string(Op::kLayer) + " block_per_row";
  const std::string kernel = std::string(Op::kLayer) + "_rows";
  return makeKernel<Op>(c, whyNot,
                        [tactic, kernel](const auto& g, const auto* x, const auto* scale,
                                         const auto* bias, auto* y, const RunContext& ctx) {
                          using T = std::remove_pointer_t<decltype(y)>;
                          return launchBlockPerRow(
                              tactic.c_str(), kernel.c_str(), g.rows, g.len, ctx,
                              [&](unsigned blocks, int threads, cudaStream_t stream) {
                                Op::template launchRows<T>(blocks, threads, stream, x, scale, bias,
                                                           y, g);
                              });
                        });
}

// The tactics of Op, fastest first.
template <class Op>
constexpr Tactic kTactics[] = {{"block_per_row", &createRows<Op>},
                               {"reference", &createReference<Op>}};

}  // namespace kiln::cuda::row_normalization
