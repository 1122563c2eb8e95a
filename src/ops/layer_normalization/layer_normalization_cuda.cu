// LayerNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one
// type): the tactics of row_normalization_cuda.cuh (block_per_row, reference) over this op's rows.
// Both run the rules of layer_normalization_semantics.h, the CPU's (layer_normalization_cpu.cpp):
// FP32 statistics in two passes whatever the storage, the first shifted by the row's first value.
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
};

}  // namespace
}  // namespace kiln::cuda::layer_normalization

std::span<const kiln::Tactic> kiln::ops::LayerNormalization::cudaTactics() {
  return cuda::row_normalization::kTactics<cuda::layer_normalization::LayerNorm>;
}
