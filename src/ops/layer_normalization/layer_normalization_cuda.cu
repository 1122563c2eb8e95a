// LayerNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one
// type): the tactics of row_normalization_cuda.cuh (warp_per_row, block_per_row, reference) over
// this op's rows. All run the rules of layer_normalization_semantics.h, the CPU's
// (layer_normalization_cpu.cpp): FP32 statistics in two passes whatever the storage, the first
// shifted by the row's first value.
#include <cstdint>
#include <string>

#include "ops/layer_normalization/layer_normalization_semantics.h"
#include "ops/op.h"
#include "ops/row_normalization_cuda.cuh"

namespace kiln::cuda::layer_normalization {
namespace {

namespace ln = ops::layer_normalization;

using Geometry = ln::RowGeometry;

// The rows split over a block's threads: the sums of rowStatistics, reduced across the block.
template <class T>
__global__ void layerNormRowsKernel(const T* x, const T* scale, const T* bias, T* y, Geometry g) {
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    float mean, invStdDev;
    row_normalization::blockRowStatistics(xr, g.len, g.epsilon, mean, invStdDev);
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x)
      yr[j] = fromFloat<T>(ln::normalized(toFloat(xr[j]), mean, invStdDev,
                                          toFloat(scale[g.scale.at(j)]),
                                          bias ? toFloat(bias[g.bias.at(j)]) : 0.f));
  }
}

struct LayerNorm {
  static constexpr const char* kLayer = "layer_normalization";
  using Geometry = ln::RowGeometry;
  using Row = ln::StoredRow;

  static bool check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
    const auto* p = config_checks::validate<LayerNormalizationParams>(
        c, DeviceKind::kCUDA, kLayer, -1, &ops::LayerNormalization::infer, whyNot);
    if (!p || !row_normalization::checkTensors(c, kLayer, "Scale and B", whyNot)) return false;
    g = ln::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims,
                        c.inputs.size() == 3 ? &c.inputs[2].dims : nullptr);
    return true;
  }

  template <class T>
  static void launchRows(unsigned blocks, int threads, cudaStream_t stream, const T* x,
                         const T* scale, const T* bias, T* y, const Geometry& g) {
    layerNormRowsKernel<T><<<blocks, threads, 0, stream>>>(x, scale, bias, y, g);
  }

  // warp_per_row: the mean and 1 / stddev of rowStatistics, then normalized as above. Scale and
  // B are one run of the row's shape or one value (a ParamIndex of one dim: offset j * stride),
  // so that the kernel's unrolled epilogue has no general index walk.
  static constexpr bool kCentred = true;
  // value() reads Scale and B at j * stride only.
  static constexpr bool kRowParams = true;
  static bool warpRowsFit(const Geometry& g, std::string* whyNot) {
    if (g.scale.rank == 1 && (!g.hasBias || g.bias.rank == 1)) return true;
    return config_checks::fail(whyNot,
                               "layer_normalization warp_per_row: Scale and B must each have the "
                               "row's shape or one value (block_per_row takes other broadcasts)");
  }
  __device__ static float fromParams(float x, float mean, float invStdDev, float scale,
                                     float bias) {
    return ln::normalized(x, mean, invStdDev, scale, bias);
  }
  template <class T>
  __device__ static float value(const Geometry& g, const T* scale, const T* bias, int64_t /*r*/,
                                int64_t j, float x, float mean, float invStdDev) {
    return fromParams(x, mean, invStdDev, toFloat(scale[j * g.scale.strides[0]]),
                      bias ? toFloat(bias[j * g.bias.strides[0]]) : 0.f);
  }
};

}  // namespace
}  // namespace kiln::cuda::layer_normalization

std::span<const kiln::Tactic> kiln::ops::LayerNormalization::cudaTactics() {
  return cuda::row_normalization::kTactics<cuda::layer_normalization::LayerNorm>;
}
