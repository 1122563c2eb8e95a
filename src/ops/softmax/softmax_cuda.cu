// Softmax and log-softmax on CUDA, over any axis. Tactics, fastest first:
//   warp_rows        one warp per row (4 rows per block) for contiguous rows (as contiguous_rows)
//                    of at most 4096 elements: the row read once into registers (16-byte vectors
//                    where the length and pointers allow), FP32 max and sum from the registers by
//                    warp shuffles, one rounded store; not emulatable
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
#include "backends/cuda/vector_access.cuh"
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

// The params when the rows of the axis are contiguous and follow one another in memory, in
// input and output alike (*len and *rows their geometry); else nullptr and *whyNot, `tactic`
// naming the tactic.
const SoftmaxParams* checkContiguousRows(const KernelConfig& c, const char* tactic,
                                         std::string* whyNot, int64_t* len, int64_t* rows) {
  int32_t axis = 0;
  const SoftmaxParams* p = checkSoftmax(c, whyNot, &axis);
  if (!p) return nullptr;
  const PluginTensorDesc &x = c.inputs[0], &y = c.outputs[0];
  const Dims& d = x.dims;
  const bool lastAxis = axis == d.nbDims - 1 && isRowMajor(x) && isRowMajor(y);
  const bool channelsAxis = axis == 1 && d.nbDims == 4 &&
                            x.format == TensorFormat::kCHANNELS_LAST &&
                            y.format == TensorFormat::kCHANNELS_LAST;
  if (!lastAxis && !channelsAxis) {
    fail(whyNot, std::string("softmax ") + tactic + ": axis " + std::to_string(axis) +
                     " is not contiguous in memory (needs the last axis of a linear tensor or "
                     "the channels of a channels_last one, same layout in and out)");
    return nullptr;
  }
  *len = d.d[axis];
  *rows = *len == 0 ? 0 : volume(d) / *len;
  return p;
}

std::unique_ptr<Kernel> createRows(const KernelConfig& c, std::string* whyNot) {
  int64_t len = 0, rows = 0;
  const SoftmaxParams* p = checkContiguousRows(c, "contiguous_rows", whyNot, &len, &rows);
  if (!p) return nullptr;
  const bool log = p->log;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
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

// ---- warp_rows ----
//
// Lane l holds chunks c = 0, 1, ... of kVec consecutive elements from (c * 32 + l) * kVec (each
// chunk step one coalesced access of the warp); kPerLane values per lane is the capacity the
// kernel was compiled for, and chunks past the row's end take part in nothing. With kVec > 1
// the length is a multiple of kVec. The row is read from memory once, where contiguous_rows
// reads it three times.

constexpr int64_t kWarpMaxLen = 4096;  // 128 FP32 values per lane
constexpr int kWarpRowsPerBlock = 4;

template <class T, int kVec, int kPerLane>
__global__ void __launch_bounds__(kWarpRowsPerBlock * 32)
    softmaxWarpRowsKernel(const T* x, T* y, int64_t rows, int len, bool log) {
  constexpr int kChunks = kPerLane / kVec;
  const int lane = threadIdx.x & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + (threadIdx.x >> 5);
       r < rows; r += warps) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    float v[kPerLane];
    float m = -INFINITY;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j0 = (c * 32 + lane) * kVec;
      if (j0 < len) {
        const Vec<T, kVec> p = loadVec<kVec>(xr + j0);
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          v[c * kVec + k] = toFloat(p.v[k]);
          m = fmaxf(m, v[c * kVec + k]);  // a NaN never wins, as in contiguous_rows
        }
      }
    }
    m = warpReduce(m, MaxIgnoreNan{});
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
      if ((c * 32 + lane) * kVec < len)
#pragma unroll
        for (int k = 0; k < kVec; ++k) sum += sumTerm(v[c * kVec + k], m);
    sum = warpReduce(sum, SumF{});
    const float logSum = log ? logOf(sum) : 0.f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j0 = (c * 32 + lane) * kVec;
      if (j0 < len) {
        Vec<T, kVec> p;
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const float e = v[c * kVec + k];
          p.v[k] = fromFloat<T>(log ? logSoftmaxValue(e, m, logSum) : softmaxValue(e, m, sum));
        }
        storeVec<kVec>(yr + j0, p);
      }
    }
  }
}

// The kernel for rows of len elements: the smallest capacity (8, 32 or 128 values per lane)
// that holds a row.
template <class T, int kVec>
void launchWarpRows(unsigned blocks, cudaStream_t stream, const T* x, T* y, int64_t rows, int len,
                    bool log) {
  constexpr int kThreads = kWarpRowsPerBlock * 32;
  if (len <= 32 * 8)
    softmaxWarpRowsKernel<T, kVec, 8><<<blocks, kThreads, 0, stream>>>(x, y, rows, len, log);
  else if (len <= 32 * 32)
    softmaxWarpRowsKernel<T, kVec, 32><<<blocks, kThreads, 0, stream>>>(x, y, rows, len, log);
  else
    softmaxWarpRowsKernel<T, kVec, 128><<<blocks, kThreads, 0, stream>>>(x, y, rows, len, log);
}

std::unique_ptr<Kernel> createWarpRows(const KernelConfig& c, std::string* whyNot) {
  int64_t len = 0, rows = 0;
  const SoftmaxParams* p = checkContiguousRows(c, "warp_rows", whyNot, &len, &rows);
  if (!p) return nullptr;
  if (len > kWarpMaxLen) {
    fail(whyNot, "softmax warp_rows: rows of " + std::to_string(len) + " elements exceed the " +
                     std::to_string(kWarpMaxLen) +
                     " a warp holds in registers (contiguous_rows takes them)");
    return nullptr;
  }
  const bool log = p->log;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
      [rows, len, log](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        if (ctx.emulate)
          return unsupported(
              "softmax warp_rows: a warp-shuffle kernel, which has no host emulation");
        if (rows == 0 || len == 0) return Status::ok();
        using T = decltype(tag);
        const auto* x = static_cast<const T*>(in[0]);
        auto* y = static_cast<T*>(out[0]);
        const int64_t groups = (rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock;
        const auto blocks =
            static_cast<unsigned>(groups < (int64_t{1} << 20) ? groups : (int64_t{1} << 20));
        const auto stream = static_cast<cudaStream_t>(ctx.stream);
        constexpr int kVec = kVectorElements<T>;
        if (len % kVec == 0 && isAligned(x) && isAligned(y))
          launchWarpRows<T, kVec>(blocks, stream, x, y, rows, static_cast<int>(len), log);
        else
          launchWarpRows<T, 1>(blocks, stream, x, y, rows, static_cast<int>(len), log);
        return checkLaunch("softmax_warp_rows", __FILE__, __LINE__);
      });
}

constexpr Tactic kTactics[] = {{"warp_rows", &createWarpRows},
                               {"contiguous_rows", &createRows},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::softmax

std::span<const kiln::Tactic> kiln::ops::Softmax::cudaTactics() { return cuda::softmax::kTactics; }
