// RMSNormalization on CUDA, linear tensors of fp32, fp16 or bf16 (X, Scale and Y of one type).
// Tactics, fastest first:
//   block_per_row  one thread block per row, the sum of squares by a shared-memory/shuffle
//                  reduction; not emulatable (kUnsupported under RunContext::emulate)
//   reference      one thread per row, a per-element function over the row index (emulatable on
//                  the host)
// Both run the rules of rms_normalization_semantics.h, the CPU's (rms_normalization_cpu.cpp): the
// sum of squares in FP32 whatever the storage.
#include <cstdint>
#include <string>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/rms_normalization/rms_normalization_semantics.h"

namespace kiln::cuda::rms_normalization {
namespace {

namespace rms = ops::rms_normalization;
using config_checks::fail;

using Geometry = rms::RowGeometry;

template <class T>
struct RmsNormRow {
  const T* x;
  const T* scale;
  T* y;
  Geometry g;
  __host__ __device__ void operator()(int64_t r) const {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    rms::normalizeRow(
        g.len, g.epsilon, [xr](int64_t j) { return toFloat(xr[j]); },
        [this](int64_t j) { return toFloat(scale[g.scale.at(j)]); },
        [yr](int64_t j, float v) { yr[j] = fromFloat<T>(v); });
  }
};

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

// The layer's geometry when the configuration is consistent, else false.
bool check(const KernelConfig& c, Geometry& g, std::string* whyNot) {
  const auto* p = config_checks::validate<RMSNormalizationParams>(
      c, DeviceKind::kCUDA, "rms_normalization", 2, &ops::RMSNormalization::infer, whyNot);
  if (!p) return false;
  const DataType t = c.inputs[0].type;
  for (const auto* list : {&c.inputs, &c.outputs})
    for (const PluginTensorDesc& d : *list) {
      if (d.type != t) {
        fail(whyNot, std::string("rms_normalization: Scale must have X's type (") +
                         dataTypeName(t) + "), got " + dataTypeName(d.type));
        return false;
      }
      // Rows are contiguous runs of X's row-major order.
      if (d.format != TensorFormat::kLINEAR) {
        fail(whyNot,
             std::string("rms_normalization: needs linear tensors, got ") + formatName(d.format));
        return false;
      }
    }
  g = rms::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims);
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
                      RmsNormRow<T> f{static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                                      static_cast<T*>(out[0]), g};
                      return launchElements(f, g.rows, ctx, "rms_normalization_reference");
                    });
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  return makeKernel(
      c, whyNot,
      [](auto tag, const Geometry& g, const void* const* in, void* const* out,
         const RunContext& ctx) {
        if (ctx.emulate) return notEmulated("rms_normalization block_per_row");
        if (g.rows == 0) return Status::ok();
        using T = decltype(tag);
        rmsNormRowsKernel<T>
            <<<blocksFor(g.rows), threadsFor(g.len), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
                static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), static_cast<T*>(out[0]),
                g);
        return checkLaunch("rms_normalization_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"block_per_row", &createRows}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::rms_normalization

std::span<const kiln::Tactic> kiln::ops::RMSNormalization::cudaTactics() {
  return cuda::rms_normalization::kTactics;
}
