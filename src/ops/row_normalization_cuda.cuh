// The CUDA tactics of the row normalisations (LayerNormalization, RMSNormalization,
// GroupNormalization), fastest first:
//   warp_per_row   rows of at most kWarpMaxLen elements: one warp per row, several rows per block,
//                  the row read once into registers (16-byte vectors where the row length and the
//                  pointers allow, else one element per lane at a time), the FP32 statistics from
//                  the registers by warp shuffles, one rounded store; not emulatable
//   block_per_row  one thread block per row, the row's sums by a shared-memory/shuffle reduction
//                  (long rows); not emulatable (kUnsupported under RunContext::emulate)
//   reference      one thread per row running the op's StoredRow (its semantics header, the CPU
//                  reference's row function), emulatable on the host
// What the three ops would otherwise repeat is here once: the checks of the configuration, the
// kernel over the float types and the launches. An op's .cu keeps its arithmetic (the block
// kernel) and describes itself to these templates as a struct Op with
//   kLayer                the layer's name, also the prefix of its kernels' names;
//   Geometry              its rows (rows, len);
//   Row                   its semantics' StoredRow;
//   check(c, g, whyNot)   validate the configuration and compute g (false and *whyNot if not);
//   launchRows<T>(blocks, threads, stream, x, scale, bias, y, g)  enqueue its block kernel;
//   warpRowsFit(g, whyNot)  whether warp_per_row takes rows of g (false and *whyNot if not);
//   kCentred              true: LayerNormalization's statistics (shifted mean, then the squared
//                         deviations; mean and 1/stddev), false: RMSNormalization's (the sum of
//                         squares; mean 0 and 1/rms);
//   value<T>(g, scale, bias, r, j, x, mean, inv)  element j of row r before rounding, from those
//                         statistics (the warp kernel's epilogue; the op's own formula);
//   kRowParams            true when value() reads Scale and B only at j * g.scale/bias.strides[0]
//                         (so warp_per_row may read a chunk's parameters as vectors); such an
//                         Op also has
//   fromParams(x, mean, inv, scale, bias)  value() from element j's FP32 Scale and B (B 0
//                         without it), which the vector path calls with register values.
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
#include "backends/cuda/vector_access.cuh"
#include "ops/layer_normalization/layer_normalization_semantics.h"
#include "ops/rms_normalization/rms_normalization_semantics.h"

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

// ---- warp_per_row ----
//
// A row of len <= kWarpMaxLen elements lives in one warp's registers: lane l holds chunks
// c = 0, 1, ... of kVec consecutive elements starting at (c * 32 + l) * kVec, so that each chunk
// step of the warp is one coalesced access of 32 * kVec elements. kPerLane (a multiple of kVec)
// is the register capacity the kernel was compiled for; chunks past the row's end stay out of
// every sum and store. With kVec > 1 the row length is a multiple of kVec, so a chunk is either
// wholly in the row or wholly out.
//
// Why not memory: the reference and block_per_row read a row three times (mean, variance,
// output); here it is read once and written once, which is all the bandwidth the op needs. The
// two statistics passes run over the registers, so the variance is still the sum of squared
// deviations from the mean (no E[x^2] - E[x]^2 cancellation), in FP32 whatever the storage.

// Rows longer than this go to block_per_row: 128 FP32 values per lane is the most registers a
// thread can give the row and keep 4 warps per block resident.
inline constexpr int64_t kWarpMaxLen = 4096;
inline constexpr int kWarpRowsPerBlock = 4;

// The sum over the warp, in every lane (block_reduce.cuh's butterfly: every lane adds the same
// terms in the same order, so all 32 agree bit for bit).
__device__ inline float warpSum(float v) { return warpReduce(v, SumF{}); }

// kVecParams: Scale and B (when present) are one run of the row's shape, 16-byte aligned, so a
// chunk's parameters are read as vectors like X (only for an Op with kRowParams, where that
// stride is 1). Otherwise each element's
// parameters are read one by one: on a 768-wide FP16 row, 48 scalar loads per lane beside X's 3.
template <class Op, class T, int kVec, int kPerLane, bool kVecParams>
__global__ void __launch_bounds__(kWarpRowsPerBlock * 32)
    warpRowsKernel(const T* x, const T* scale, const T* bias, T* y, typename Op::Geometry g) {
  namespace ln = ops::layer_normalization;
  namespace rms = ops::rms_normalization;
  constexpr int kChunks = kPerLane / kVec;
  const int lane = threadIdx.x & 31;
  const int len = static_cast<int>(g.len);  // <= kWarpMaxLen: in-row offsets fit an int
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpRowsPerBlock;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + (threadIdx.x >> 5);
       r < g.rows; r += warps) {
    const T* xr = x + r * g.len;
    T* yr = y + r * g.len;
    float v[kPerLane];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j0 = (c * 32 + lane) * kVec;
      if (j0 < len) {
        const Vec<T, kVec> p = loadVec<kVec>(xr + j0);
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[c * kVec + k] = toFloat(p.v[k]);
      } else {
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[c * kVec + k] = 0.f;
      }
    }
    float mean = 0.f, inv;
    if constexpr (Op::kCentred) {
      // Element 0 of the row is lane 0's first value: the shift of rowStatistics' first pass.
      const float x0 = __shfl_sync(0xffffffffu, v[0], 0);
      float shifted = 0.f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        if ((c * 32 + lane) * kVec < len)
#pragma unroll
          for (int k = 0; k < kVec; ++k) shifted += v[c * kVec + k] - x0;
      mean = ln::meanOf(x0, warpSum(shifted), g.len);
      float squares = 0.f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        if ((c * 32 + lane) * kVec < len)
#pragma unroll
          for (int k = 0; k < kVec; ++k) {
            const float d = v[c * kVec + k] - mean;
            squares += d * d;
          }
      inv = ln::invStdDevOf(warpSum(squares), g.len, g.epsilon);
    } else {
      float squares = 0.f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        if ((c * 32 + lane) * kVec < len)
#pragma unroll
          for (int k = 0; k < kVec; ++k) squares += v[c * kVec + k] * v[c * kVec + k];
      inv = rms::invRmsOf(warpSum(squares), g.len, g.epsilon);
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j0 = (c * 32 + lane) * kVec;
      if (j0 < len) {
        Vec<T, kVec> p;
        if constexpr (kVecParams) {
          // The chunk's Scale and B as vectors, handed over element by element: a pointer into
          // them with a run-time stride (value()) would put both vectors in local memory.
          const Vec<T, kVec> sv = loadVec<kVec>(scale + j0);
          Vec<T, kVec> bv;
          if (bias) bv = loadVec<kVec>(bias + j0);
#pragma unroll
          for (int k = 0; k < kVec; ++k)
            p.v[k] = fromFloat<T>(Op::fromParams(v[c * kVec + k], mean, inv, toFloat(sv.v[k]),
                                                 bias ? toFloat(bv.v[k]) : 0.f));
        } else {
#pragma unroll
          for (int k = 0; k < kVec; ++k)
            p.v[k] = fromFloat<T>(
                Op::template value<T>(g, scale, bias, r, j0 + k, v[c * kVec + k], mean, inv));
        }
        storeVec<kVec>(yr + j0, p);
      }
    }
  }
}

// The kernel for rows of len elements, kVec elements per access: the smallest register capacity
// (8, 24, 32 or 128 values per lane) that holds the row. 24 is for 768-wide rows (BERT-base,
// ViT-B): in the 32 kernel their dead fourth chunk takes registers (FP16: 54 against 48, so 9
// resident blocks per SM instead of 10).
template <class Op, class T, int kVec, bool kVecParams = false>
void launchWarpRows(int64_t len, unsigned blocks, cudaStream_t stream, const T* x, const T* scale,
                    const T* bias, T* y, const typename Op::Geometry& g) {
  constexpr int kThreads = kWarpRowsPerBlock * 32;
  if (len <= 32 * 8)
    warpRowsKernel<Op, T, kVec, 8, kVecParams>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, y, g);
  else if (len <= 32 * 24)
    warpRowsKernel<Op, T, kVec, 24, kVecParams>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, y, g);
  else if (len <= 32 * 32)
    warpRowsKernel<Op, T, kVec, 32, kVecParams>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, y, g);
  else
    warpRowsKernel<Op, T, kVec, 128, kVecParams>
        <<<blocks, kThreads, 0, stream>>>(x, scale, bias, y, g);
}

// Whether Op's Scale and B are read as vectors (kVecParams above) for geometry g.
template <class Op, class T>
bool vectorParams(const typename Op::Geometry& g, const T* scale, const T* bias) {
  if constexpr (Op::kRowParams) {
    return g.scale.strides[0] == 1 && isAligned(scale) &&
           (!bias || (g.bias.strides[0] == 1 && isAligned(bias)));
  } else {
    return false;
  }
}

template <class Op>
std::unique_ptr<Kernel> createWarpRows(const KernelConfig& c, std::string* whyNot) {
  typename Op::Geometry g;
  if (!Op::check(c, g, whyNot)) return nullptr;
  if (!Op::warpRowsFit(g, whyNot)) return nullptr;
  if (g.len > kWarpMaxLen) {
    config_checks::fail(whyNot, std::string(Op::kLayer) + " warp_per_row: rows of " +
                                    std::to_string(g.len) + " elements exceed the " +
                                    std::to_string(kWarpMaxLen) +
                                    " a warp holds in registers (block_per_row takes them)");
    return nullptr;
  }
  const std::string tactic = std::string(Op::kLayer) + " warp_per_row";
  const std::string kernel = std::string(Op::kLayer) + "_warp_rows";
  return makeKernel<Op>(
      c, whyNot,
      [tactic, kernel](const auto& g, const auto* x, const auto* scale, const auto* bias, auto* y,
                       const RunContext& ctx) {
        using T = std::remove_pointer_t<decltype(y)>;
        if (ctx.emulate)
          return unsupported(tactic + ": a warp-shuffle kernel, which has no host emulation");
        if (g.rows == 0) return Status::ok();
        const int64_t groups = (g.rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock;
        const auto blocks =
            static_cast<unsigned>(groups < (int64_t{1} << 20) ? groups : (int64_t{1} << 20));
        const auto stream = static_cast<cudaStream_t>(ctx.stream);
        // 16-byte vectors when every row starts on a 16-byte boundary: the row length a multiple
        // of the vector and X and Y aligned; Scale and B too where they are whole rows, aligned
        // (else element by element: a few KB that every row shares, served from cache).
        constexpr int kVec = kVectorElements<T>;
        if (g.len % kVec == 0 && isAligned(x) && isAligned(y) && vectorParams<Op>(g, scale, bias))
          // (vectorParams holds only for an Op with kRowParams: no vector kernel for the others.)
          launchWarpRows<Op, T, kVec, Op::kRowParams>(g.len, blocks, stream, x, scale, bias, y, g);
        else if (g.len % kVec == 0 && isAligned(x) && isAligned(y))
          launchWarpRows<Op, T, kVec>(g.len, blocks, stream, x, scale, bias, y, g);
        else
          launchWarpRows<Op, T, 1>(g.len, blocks, stream, x, scale, bias, y, g);
        return checkLaunch(kernel.c_str(), __FILE__, __LINE__);
      });
}

// The tactics of Op, fastest first.
template <class Op>
constexpr Tactic kTactics[] = {{"warp_per_row", &createWarpRows<Op>},
                               {"block_per_row", &createRows<Op>},
                               {"reference", &createReference<Op>}};

}  // namespace kiln::cuda::row_normalization
