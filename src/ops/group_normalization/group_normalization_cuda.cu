// GroupNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale, B and Y of one
// type). Tactics, fastest first:
//   block_per_row  one thread block per (sample, group) row, the two passes' sums by a
//                  shared-memory/shuffle reduction; not emulatable (kUnsupported under
//                  RunContext::emulate)
//   reference      one thread per row, a per-element function over the row index (emulatable on
//                  the host)
// Both run the rules of group_normalization_semantics.h, the CPU's (group_normalization_cpu.cpp):
// FP32 statistics in two passes whatever the storage, the first shifted by the row's first value.
#include <cstdint>
#include <string>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/group_normalization/group_normalization_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::group_normalization {
namespace {

namespace gn = ops::group_normalization;
namespace ln = ops::layer_normalization;
using config_checks::fail;

using Geometry = gn::GroupGeometry;

template <class T>
struct GroupNormRow {
  const T* x;
  const T* scale;
  const T* bias;
  T* y;
  Geometry g;
  __host__ __device__ void operator()(int64_t r) const {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    gn::normalizeRow(
        g, r, [xr](int64_t j) { return toFloat(xr[j]); },
        [this](int64_t c) { return toFloat(scale[c]); },
        [this](int64_t c) { return toFloat(bias[c]); },
        [yr](int64_t j, float v) { yr[j] = fromFloat<T>(v); });
  }
};

// A row split over a block's threads: the sums of rowStatistics, reduced across the block.
template <class T>
__global__ void groupNormRowsKernel(const T* x, const T* scale, const T* bias, T* y, Geometry g) {
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
    for (int64_t j = threadIdx.x; j < g.len; j += blockDim.x) {
      const int64_t c = g.channelOf(r, j);
      yr[j] = fromFloat<T>(
          ln::normalized(toFloat(xr[j]), mean, invStdDev, toFloat(scale[c]), toFloat(bias[c])));
    }
  }
}

// The layer's geometry when the configuration is consistent, else false.
bool check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
  const auto* p = config_checks::validate<GroupNormalizationParams>(
      c, DeviceKind::kCUDA, "group_normalization", 3, &ops::GroupNormalization::infer, whyNot);
  if (!p) return false;
  const DataType t = c.inputs[0].type;
  for (const auto* list : {&c.inputs, &c.outputs})
    for (const PluginTensorDesc& d : *list) {
      if (d.type != t) {
        fail(whyNot, std::string("group_normalization: Scale and B must have X's type (") +
                         dataTypeName(t) + "), got " + dataTypeName(d.type));
        return false;
      }
      // A row is a contiguous run of channels of one sample: linear layout only.
      if (d.format != TensorFormat::kLINEAR) {
        fail(whyNot,
             std::string("group_normalization: needs linear tensors, got ") + formatName(d.format));
        return false;
      }
    }
  g = gn::groupGeometry(p->numGroups, p->epsilon, c.inputs[0].dims);
  return true;
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
                      GroupNormRow<T> f{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                        static_cast<const T*>(in[2]), static_cast<T*>(out[0]), g};
                      return launchElements(f, g.rows, ctx, "group_normalization_reference");
                    });
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(
      c, whyNot,
      [](auto tag, const Geometry& g, const void* const* in, void* const* out,
         const RunContext& ctx) {
        if (ctx.emulate) return notEmulated("group_normalization block_per_row");
        if (g.rows == 0) return Status::ok();
        using T = decltype(tag);
        groupNormRowsKernel<T>
            <<<blocksFor(g.rows), threadsFor(g.len), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
                static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                static_cast<const T*>(in[2]), static_cast<T*>(out[0]), g);
        return checkLaunch("group_normalization_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"block_per_row", &createRows}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::group_normalization

std::span<const kiln::Tactic> kiln::ops::GroupNormalization::cudaTactics() {
  return cuda::group_normalization::kTactics;
}
