// Softmax and log-softmax on CUDA, over any axis. Tactics, fastest first:
//   contiguous_rows  one thread block per row when the axis is contiguous in memory (the last
//                    axis of a linear tensor, or the channels of a channels-last one) with a
//                    shared-memory/shuffle reduction; not emulatable (kUnsupported under
//                    RunContext::emulate)
//   reference        one per-element function per row (emulatable on the host), indexing through
//                    per-dim memory strides so that any mix of linear and channels-last works
//
// Value rules: softmax_semantics.h, the CPU's (softmax_cpu.cpp), evaluated in fp32 here (expf,
// float sums of positive terms).
#include <cmath>
#include <cstdint>

#include "backends/config_checks.h"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/softmax/softmax_semantics.h"

namespace kiln::cuda::softmax {
namespace {

using config_checks::fail;
using ops::softmax::logOf;
using ops::softmax::logSoftmaxValue;
using ops::softmax::raisesMax;
using ops::softmax::softmaxValue;
using ops::softmax::sumTerm;

struct SoftmaxGeometry {
  StridedWalk rows;  // over all dims but the axis; s1: input strides, s2: output strides
  int64_t len = 0, axisIn = 0, axisOut = 0;
};

template <class T>
struct SoftmaxRow {
  const T* x;
  T* y;
  SoftmaxGeometry g;
  bool log;
  __host__ __device__ void operator()(int64_t r) const {
    int64_t bi, bo;
    g.rows.offsets(r, bi, bo);
    float m = -INFINITY;
    for (int64_t j = 0; j < g.len; ++j) {
      const float v = toFloat(x[bi + j * g.axisIn]);
      if (raisesMax(m, v)) m = v;
    }
    float sum = 0.f;
    for (int64_t j = 0; j < g.len; ++j) sum += sumTerm(toFloat(x[bi + j * g.axisIn]), m);
    if (log) {
      const float logSum = logOf(sum);
      for (int64_t j = 0; j < g.len; ++j)
        y[bo + j * g.axisOut] =
            fromFloat<T>(logSoftmaxValue(toFloat(x[bi + j * g.axisIn]), m, logSum));
    } else {
      for (int64_t j = 0; j < g.len; ++j)
        y[bo + j * g.axisOut] = fromFloat<T>(softmaxValue(toFloat(x[bi + j * g.axisIn]), m, sum));
    }
  }
};

// softmax's max across the block: a NaN never wins (fmaxf returns the other operand).
struct MaxIgnoreNan {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class T>
__global__ void softmaxRowsKernel(const T* x, T* y, int64_t rows, int64_t len, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) m = fmaxf(m, toFloat(xr[j]));
    m = blockReduce(m, MaxIgnoreNan{});
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) sum += sumTerm(toFloat(xr[j]), m);
    sum = blockReduce(sum, SumF{});
    if (log) {
      const float logSum = logOf(sum);
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = fromFloat<T>(logSoftmaxValue(toFloat(xr[j]), m, logSum));
    } else {
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        yr[j] = fromFloat<T>(softmaxValue(toFloat(xr[j]), m, sum));
    }
  }
}

const SoftmaxParams* checkSoftmax(const KernelConfig& c, std::string* whyNot, int32_t* axis) {
  const SoftmaxParams* p = config_checks::validate<SoftmaxParams>(c, DeviceKind::kCUDA, "softmax",
                                                                  1, &ops::Softmax::infer, whyNot);
  if (!p) return nullptr;
  const int32_t rank = c.inputs[0].dims.nbDims;
  *axis = p->axis < 0 ? p->axis + rank : p->axis;  // inference checked the range
  return p;
}

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  int32_t axis = 0;
  const SoftmaxParams* p = checkSoftmax(c, whyNot, &axis);
  if (!p) return nullptr;
  const Dims& d = c.inputs[0].dims;
  int64_t si[Dims::kMaxDims] = {}, so[Dims::kMaxDims] = {};
  memoryStrides(c.inputs[0], si);
  memoryStrides(c.outputs[0], so);
  SoftmaxGeometry g;
  int64_t rows = 1;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (i == axis) continue;
    g.rows.dims[g.rows.rank] = d.d[i];
    g.rows.s1[g.rows.rank] = si[i];
    g.rows.s2[g.rows.rank] = so[i];
    ++g.rows.rank;
    rows *= d.d[i];
  }
  g.len = d.d[axis];
  g.axisIn = si[axis];
  g.axisOut = so[axis];
  const bool log = p->log;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
      [g, rows, log](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        SoftmaxRow<T> f{static_cast<const T*>(in[0]), static_cast<T*>(out[0]), g, log};
        return launchElements(f, g.len == 0 ? 0 : rows, ctx, "softmax_reference");
      });
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  int32_t axis = 0;
  const SoftmaxParams* p = checkSoftmax(c, whyNot, &axis);
  if (!p) return nullptr;
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  const Dims& d = x.dims;
  // Rows of the axis are contiguous and follow one another in memory, in input and output alike.
  const bool lastAxis = axis == d.nbDims - 1 && isRowMajor(x) && isRowMajor(y);
  const bool channelsAxis = axis == 1 && d.nbDims == 4 &&
                            x.format == TensorFormat::kCHANNELS_LAST &&
                            y.format == TensorFormat::kCHANNELS_LAST;
  if (!lastAxis && !channelsAxis) {
    fail(whyNot, "softmax contiguous_rows: axis " + std::to_string(axis) +
                     " is not contiguous in memory (needs the last axis of a linear tensor or "
                     "the channels of a channels_last one, same layout in and out)");
    return nullptr;
  }
  const int64_t len = d.d[axis];
  const int64_t rows = len == 0 ? 0 : volume(d) / len;
  const bool log = p->log;
  return makeTypedKernel<FloatTypes>(
      x.type,
      [rows, len, log](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        if (ctx.emulate) return notEmulated("softmax contiguous_rows");
        if (rows == 0 || len == 0) return Status::ok();
        using T = decltype(tag);
        softmaxRowsKernel<T>
            <<<blocksFor(rows), threadsFor(len), 0, static_cast<cudaStream_t>(ctx.stream)>>>(
                static_cast<const T*>(in[0]), static_cast<T*>(out[0]), rows, len, log);
        return checkLaunch("softmax_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"contiguous_rows", &createRows}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::softmax

std::span<const kiln::Tactic> kiln::ops::Softmax::cudaTactics() { return cuda::softmax::kTactics; }
