// RMSNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale and Y of one type):
// the tactics of row_normalization_cuda.cuh (warp_per_row, block_per_row, reference) over this
// op's rows. All run the rules of rms_normalization_semantics.h, the CPU's
// (rms_normalization_cpu.cpp): the sum of squares in FP32 whatever the storage.
#include <cstdint>
#include <string>

#include "ops/op.h"
#include "ops/rms_normalization/rms_normalization_semantics.h"
#include "ops/row_normalization_cuda.cuh"

namespace kiln::cuda::rms_normalization {
namespace {

namespace rms = ops::rms_normalization;

using Geometry = rms::RowGeometry;

// A row split over a block's threads: the sum of squares reduced across the block.
template <class T>
__global__ void rmsNormRowsKernel(const T* x, const T* scale, T* y, Geometry g) {
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    float squares = 0.f;
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x) {
      const float v = toFloat(xr[j]);
      squares += v * v;
    }
    const float invRms = rms::invRmsOf(blockReduce(squares, SumF{}), g.len, g.epsilon);
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x)
      yr[j] = fromFloat<T>(rms::normalized(toFloat(xr[j]), invRms, toFloat(scale[g.scale.at(j)])));
  }
}

struct RmsNorm {
  static constexpr const char* kLayer = "rms_normalization";
  using Geometry = rms::RowGeometry;
  using Row = rms::StoredRow;

  static bool check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
    const auto* p = config_checks::validate<RMSNormalizationParams>(
        c, DeviceKind::kCUDA, kLayer, 2, &ops::RMSNormalization::infer, whyNot);
    if (!p || !row_normalization::checkTensors(c, kLayer, "Scale", whyNot)) return false;
    g = rms::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims);
    return true;
  }

  // There is no B: bias is nullptr.
  template <class T>
  static void launchRows(unsigned blocks, int threads, cudaStream_t stream, const T* x,
                         const T* scale, const T* /*bias*/, T* y, const Geometry& g) {
    rmsNormRowsKernel<T><<<blocks, threads, 0, stream>>>(x, scale, y, g);
  }

  // warp_per_row: 1 / rms from the sum of squares (mean is 0), then normalized as above. Scale
  // is one run of the row's shape or one value (offset j * stride), as LayerNormalization's.
  static constexpr bool kCentred = false;
  // value() reads Scale and B at j * stride only.
  static constexpr bool kRowParams = true;
  static bool warpRowsFit(const Geometry& g, std::string* whyNot) {
    if (g.scale.rank == 1) return true;
    return config_checks::fail(whyNot,
                               "rms_normalization warp_per_row: Scale must have the row's shape "
                               "or one value (block_per_row takes other broadcasts)");
  }
  __device__ static float fromParams(float x, float /*mean*/, float invRms, float scale,
                                     float /*bias*/) {
    return rms::normalized(x, invRms, scale);
  }
  template <class T>
  __device__ static float value(const Geometry& g, const T* scale, const T* /*bias*/, int64_t /*r*/,
                                int64_t j, float x, float /*mean*/, float invRms) {
    return fromParams(x, 0.f, invRms, toFloat(scale[j * g.scale.strides[0]]), 0.f);
  }
};

}  // namespace
}  // namespace kiln::cuda::rms_normalization

std::span<const kiln::Tactic> kiln::ops::RMSNormalization::cudaTactics() {
  return cuda::row_normalization::kTactics<cuda::rms_normalization::RmsNorm>;
}
