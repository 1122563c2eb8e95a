// GroupNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one
// type): the tactics of row_normalization_cuda.cuh (warp_per_row where a group's row fits a warp,
// block_per_row, reference) over this op's rows, one per (sample, group). All run the rules of
// group_normalization_semantics.h, the CPU's (group_normalization_cpu.cpp): FP32 statistics in two
// passes whatever the storage, the first shifted by the row's first value.
#include <cstdint>
#include <string>

#include "ops/group_normalization/group_normalization_semantics.h"
#include "ops/op.h"
#include "ops/row_normalization_cuda.cuh"

namespace kiln::cuda::group_normalization {
namespace {

namespace gn = ops::group_normalization;
namespace ln = ops::layer_normalization;

using Geometry = gn::GroupGeometry;

// A row split over a block's threads: the sums of rowStatistics, reduced across the block.
template <class T>
__global__ void groupNormRowsKernel(const T* x, const T* scale, const T* bias, T* y, Geometry g) {
  for (int64_t r = blockIdx.x; r < g.rows; r += gridDim.x) {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    float mean, invStdDev;
    row_normalization::blockRowStatistics(xr, g.len, g.epsilon, mean, invStdDev);
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x) {
      const int64_t c = g.channelOf(r, j);
      yr[j] = fromFloat<T>(
          ln::normalized(toFloat(xr[j]), mean, invStdDev, toFloat(scale[c]), toFloat(bias[c])));
    }
  }
}

struct GroupNorm {
  static constexpr const char* kLayer = "group_normalization";
  using Geometry = gn::GroupGeometry;
  using Row = gn::StoredRow;

  // A row is a contiguous run of channels of one sample: linear layout only.
  static bool check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
    const auto* p = config_checks::validate<GroupNormalizationParams>(
        c, DeviceKind::kCUDA, kLayer, 3, &ops::GroupNormalization::infer, whyNot);
    if (!p || !row_normalization::checkTensors(c, kLayer, "Scale and B", whyNot)) return false;
    g = gn::groupGeometry(p->numGroups, p->epsilon, c.inputs[0].dims);
    return true;
  }

  template <class T>
  static void launchRows(unsigned blocks, int threads, cudaStream_t stream, const T* x,
                         const T* scale, const T* bias, T* y, const Geometry& g) {
    groupNormRowsKernel<T><<<blocks, threads, 0, stream>>>(x, scale, bias, y, g);
  }

  // warp_per_row (rows of at most kWarpMaxLen elements): the statistics of rowStatistics, then
  // Scale and B of the element's channel, g.channelOf(r, j).
  static constexpr bool kCentred = true;
  static constexpr bool kRowParams = false;  // value() reads per channel, from r
  static bool warpRowsFit(const Geometry&, std::string*) { return true; }
  template <class T>
  __device__ static float value(const Geometry& g, const T* scale, const T* bias, int64_t r,
                                int64_t j, float x, float mean, float invStdDev) {
    // channelOf in 32 bits: j and spatial are below kWarpMaxLen here, and a 64-bit division per
    // element would be most of the kernel's instructions.
    const int64_t c = (r % g.groups) * g.channelsPerGroup +
                      static_cast<int32_t>(j) / static_cast<int32_t>(g.spatial);
    return ln::normalized(x, mean, invStdDev, toFloat(scale[c]), toFloat(bias[c]));
  }
};

}  // namespace
}  // namespace kiln::cuda::group_normalization

std::span<const kiln::Tactic> kiln::ops::GroupNormalization::cudaTactics() {
  return cuda::row_normalization::kTactics<cuda::group_normalization::GroupNorm>;
}
