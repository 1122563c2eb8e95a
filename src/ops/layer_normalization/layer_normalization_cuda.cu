// LayerNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one
// type). Tactics, fastest first:
//   block_per_row  one thread block per row, the two passes' sums by a shared-memory/shuffle
//                  reduction; not emulatable (kUnsupported under RunContext::emulate)
//   reference      one thread per row, a per-element function over the row index (emulatable on
//                  the host)
// Both run the rules of layer_normalization_semantics.h, the CPU's (layer_normalization_cpu.cpp):
// FP32 statistics in two passes whatever the storage, the first shifted by the row's first value.
#include <cstdint>
#include <string>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/layer_normalization/layer_normalization_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::layer_normalization {
namespace {

namespace ln = ops::layer_normalization;
using config_checks::fail;

using Geometry = ln::RowGeometry;

template <class T>
struct LayerNormRow {
  const T* x;
  const T* scale;
  const T* bias;  // nullptr without B
  T* y;
  Geometry g;
  __host__ __device__ void operator()(int64_t r) const {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    ln::normalizeRow(
        g.len, g.epsilon, [xr](int64_t j) { return toFloat(xr[j]); },
        [this](int64_t j) { return toFloat(scale[g.scale.at(j)]); },
        [this](int64_t j) { return bias ? toFloat(bias[g.bias.at(j)]) : 0.f; },
        [yr](int64_t j, float v) { yr[j] = fromFloat<T>(v); });
  }
};

// The rows split over a block's threads: the sums of rowStatistics, reduced across the block.
template <class T>
__global__ void layerNormRowsKernel(const T* x, const T* scale, const T* bias, T* y, Geometry g) {
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    const float x0 = toFloat(xr[0]);
    float shifted = 0.f;
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x) shifted += toFloat(xr[j]) - x0;
    const float mean = ln::meanOf(x0, blockReduce(shifted, SumF{}), g.len);
    float squares = 0.f;
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x) {
      const float d = toFloat(xr[j]) - mean;
      squares += d * d;
    }
    const float invStdDev = ln::invStdDevOf(blockReduce(squares, SumF{}), g.len, g.epsilon);
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x)
      yr[j] = fromFloat<T>(ln::normalized(toFloat(xr[j]), mean, invStdDev,
                                          toFloat(scale[g.scale.at(j)]),
                                          bias ? toFloat(bias[g.bias.at(j)]) : 0.f));
  }
}

// The layer's params and geometry when the configuration is consistent, else nullptr.
const LayerNormalizationParams* check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
  const auto* p = config_checks::validate<LayerNormalizationParams>(
      c, DeviceKind::kCUDA, "layer_normalization", -1, &ops::LayerNormalization::infer, whyNot);
  if (!p) return nullptr;
  const DataType t = c.inputs[0].type;
  for (const auto* list : {&c.inputs, &c.outputs})
    for (const PluginTensorDesc& d : *list) {
      if (d.type != t) {
        fail(whyNot, std::string("layer_normalization: Scale and B must have X's type (") +
                         dataTypeName(t) + "), got " + dataTypeName(d.type));
        return nullptr;
      }
      // Rows are contiguous runs of X's row-major order (a channels-last tensor has one only
      // when its layout coincides with linear).
      if (d.format != TensorFormat::kLINEAR) {
        fail(whyNot,
             std::string("layer_normalization: needs linear tensors, got ") + formatName(d.format));
        return nullptr;
      }
    }
  g = ln::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims,
                      c.inputs.size() == 3 ? &c.inputs[2].dims : nullptr);
  return p;
}

// A kernel over every float type whose run is launch(T{}, geometry, in, out, ctx).
template <class Launch>
std::unique_ptr<Kernel> makeKernel(const KernelConfig& c, std::string* whyNot, Launch launch) {
  Geometry g;
  if (!check(c, g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
      [g, launch](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        return launch(tag, g, in, out, ctx);
      });
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(c, whyNot,
                    [](auto tag, const Geometry& g, const void* const* in, void* const* out,
                       const RunContext& ctx) {
                      using T = decltype(tag);
                      LayerNormRow<T> f{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                        g.hasBias ? static_cast<const T*>(in[2]) : nullptr,
                                        static_cast<T*>(out[0]), g};
                      return launchElements(f, g.rows, ctx, "layer_normalization_reference");
                    });
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(
      c, whyNot,
      [](auto tag, const Geometry& g, const void* const* in, void* const* out,
         const RunContext& ctx) {
        if (ctx.emulate) return notEmulated("layer_normalization block_per_row");
        if (g.rows == 0) return Status::ok();
        using T = decltype(tag);
        layerNormRowsKernel<T>
            <<<blocksFor(g.rows), threadsFor(g.len), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
                static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                g.hasBias ? static_cast<const T*>(in[2]) : nullptr, static_cast<T*>(out[0]), g);
        return checkLaunch("layer_normalization_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"block_per_row", &createRows}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::layer_normalization

std::span<const kiln::Tactic> kiln::ops::LayerNormalization::cudaTactics() {
  return cuda::layer_normalization::kTactics;
}
