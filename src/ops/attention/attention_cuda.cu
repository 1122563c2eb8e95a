// Attention on CUDA. Tactics, fastest first (the builder times those that accept a layer):
//   flash_mma       fp16/bf16, head sizes up to 128: one thread block of 4 warps per 64 query
//                   rows of one batch index, looping over blocks of 64 keys. Each warp holds its
//                   16 rows of Q and of the output in registers; the scores Q K^T and the product
//                   P V run on tensor cores (mma.sync m16n8k16, FP32 accumulation), and the
//                   online softmax of attention_semantics.h runs between them in FP32 on the
//                   score fragments, so the score matrix never reaches device memory. Only the
//                   probabilities are rounded to the storage type, as the A operand of P V.
//   unfused_cublas  fp32/fp16: the chain the fusion replaced, as one kernel: S = scale Q K^T by
//                   cuBLAS into the workspace, the mask add and softmax (FP32) in place, O = S V
//                   by cuBLAS. It is what FP32 networks use, and the yardstick by which the
//                   timing decides that the fused kernel is worth it.
//   reference       every float type: one thread per output element, all in FP32 (emulatable on
//                   the host, so the index rules are tested in CI).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda/cublas_types.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/attention/attention_semantics.h"
#include "ops/op.h"
#include "ops/softmax/softmax_semantics.h"

namespace kiln::cuda::attention {
namespace {

namespace at = ops::attention;
using at::Geometry;

// The layer's geometry when the configuration is consistent, else false with *whyNot.
bool readGeometry(const KernelConfig& c, const char* tactic, Geometry& g, std::string* whyNot) {
  const auto* p = validateFloatLayer<AttentionParams>(c, LayerType::kATTENTION, "attention", tactic,
                                                      false, whyNot);
  if (!p) return false;
  const bool hasMask = c.inputs.size() == 4;
  g = at::geometryOf(*p, c.inputs[0].dims, c.inputs[1].dims, c.inputs[2].dims,
                     hasMask ? &c.inputs[3].dims : nullptr, c.outputs[0].dims);
  return true;
}

// ---- reference -------------------------------------------------------------------------------

template <class T>
struct ReferenceElement {
  const T* q;
  const T* k;
  const T* v;
  const T* mask;  // nullptr without a mask
  T* y;
  Geometry g;

  __host__ __device__ float scoreAt(const at::Offsets& o, int64_t i, int64_t j) const {
    float dot = 0.f;
    for (int64_t e = 0; e < g.d; ++e)
      dot += toFloat(q[o.q + i * g.d + e]) * toFloat(k[o.k + at::keyIndex(g, j, e)]);
    const float add = mask ? toFloat(mask[o.mask + at::maskIndex(g, i, j)]) : 0.f;
    return at::score(dot, g.scale, add);
  }

  // Output element `index` of [count, Sq, Dv]: the Softmax layer's one-pass softmax over the
  // row's scores, then the weighted sum of V's column.
  __host__ __device__ void operator()(int64_t index) const {
    const int64_t e = index % g.dv;
    const int64_t i = (index / g.dv) % g.sq;
    const int64_t n = index / (g.dv * g.sq);
    const at::Offsets o = at::offsetsOf(g, n);
    float m = -INFINITY;
    for (int64_t j = 0; j < g.sk; ++j) {
      const float s = scoreAt(o, i, j);
      if (ops::softmax::raisesMax(m, s)) m = s;
    }
    float sum = 0.f, acc = 0.f;
    for (int64_t j = 0; j < g.sk; ++j) {
      const float p = ops::softmax::sumTerm(scoreAt(o, i, j), m);
      sum += p;
      acc += p * toFloat(v[o.v + j * g.dv + e]);
    }
    if (g.zeroNanRows && at::nanRow(sum)) {  // V weighed by zeros
      acc = 0.f;
      for (int64_t j = 0; j < g.sk; ++j) acc += 0.f * toFloat(v[o.v + j * g.dv + e]);
      sum = 1.f;
    }
    y[index] = fromFloat<T>(acc / sum);
  }
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, "reference", g, whyNot)) return nullptr;
  return makeTypedKernel<FloatTypes>(
      c.inputs[0].type,
      [g](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        using T = decltype(tag);
        ReferenceElement<T> f{
            static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
            static_cast<const T*>(in[2]), g.hasMask ? static_cast<const T*>(in[3]) : nullptr,
            static_cast<T*>(out[0]),      g};
        return launchElements(f, g.count * g.sq * g.dv, ctx, "attention_reference");
      });
}

// ---- flash_mma -------------------------------------------------------------------------------

constexpr int kWarps = 4;
constexpr int kBlockRows = 16 * kWarps;  // query rows per thread block
constexpr int kBlockKeys = 64;           // keys per step
constexpr int kPad = 8;                  // shared-memory row padding: conflict-free fragments

// Two storage-type values packed into the 32-bit register an mma operand takes (the first in
// the low half).
template <class T>
__device__ inline uint32_t packPair(float a, float b) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const uint32_t*>(&h);
  }
}

template <class T>
__device__ inline uint32_t sharedPair(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

// c += a b for one m16n8k16 tile (PTX ISA "mma.m16n8k16": a is 16x16 row-major in 4 registers,
// b 16x8 column-major in 2, c 16x8 FP32 in 4).
template <class T>
__device__ inline void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Q[row][col], Q[row][col + 1] of one batch index as an mma register (0 outside the matrix).
template <class T>
__device__ inline uint32_t queryPair(const T* q, const Geometry& g, int64_t row, int64_t col) {
  const bool inRow = row < g.sq;
  const float a = inRow && col < g.d ? toFloat(q[row * g.d + col]) : 0.f;
  const float b = inRow && col + 1 < g.d ? toFloat(q[row * g.d + col + 1]) : 0.f;
  return packPair<T>(a, b);
}

// The largest of v over the 4 threads that hold one row of a fragment (a "quad").
__device__ inline float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ inline float quadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Fills keys[j][e] = K(j0 + j, e) and valuesT[e][j] = V(j0 + j, e), zero outside the matrices.
// `vectorized`: d == dv == DP, K not transposed, every row 16-byte aligned: 8 elements a load.
template <class T, int DP>
__device__ inline void loadKeyBlock(const T* k, const T* v, const Geometry& g, int64_t j0,
                                    bool vectorized, T (&keys)[kBlockKeys][DP + kPad],
                                    T (&valuesT)[DP][kBlockKeys + kPad]) {
  const T zero = fromFloat<T>(0.f);
  if (vectorized) {
    constexpr int kVec = 8, kChunks = kBlockKeys * DP / kVec;
    for (int idx = threadIdx.x; idx < kChunks; idx += blockDim.x) {
      const int j = idx / (DP / kVec), e = idx % (DP / kVec) * kVec;
      const int64_t jj = j0 + j;
      uint4 kk = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
      if (jj < g.sk) {
        kk = *reinterpret_cast<const uint4*>(k + jj * g.d + e);
        vv = *reinterpret_cast<const uint4*>(v + jj * g.dv + e);
      }
      *reinterpret_cast<uint4*>(&keys[j][e]) = kk;
      const T* vs = reinterpret_cast<const T*>(&vv);
      for (int x = 0; x < kVec; ++x) valuesT[e + x][j] = vs[x];
    }
    return;
  }
  for (int idx = threadIdx.x; idx < kBlockKeys * DP; idx += blockDim.x) {
    // Consecutive threads read consecutive addresses of K in either layout.
    const int j = g.keyTransposed ? idx % kBlockKeys : idx / DP;
    const int e = g.keyTransposed ? idx / kBlockKeys : idx % DP;
    const int64_t jj = j0 + j;
    keys[j][e] = jj < g.sk && e < g.d ? k[at::keyIndex(g, jj, e)] : zero;
  }
  for (int idx = threadIdx.x; idx < kBlockKeys * DP; idx += blockDim.x) {
    const int j = idx / DP, e = idx % DP;
    const int64_t jj = j0 + j;
    valuesT[e][j] = jj < g.sk && e < g.dv ? v[jj * g.dv + e] : zero;
  }
}

// Fragment layout (PTX ISA, m16n8k16): lane = 4 * group + t. In a 16x8 accumulator, registers 0
// and 1 are row `group`, columns 2t and 2t + 1; registers 2 and 3 are row group + 8. So each
// thread holds two rows (r0 = group, r1 = group + 8) of its warp's 16, and the four threads of a
// quad together hold a row's 8 columns of every tile.
template <class T, int DP>
__global__ void __launch_bounds__(kWarps * 32)
    flashAttentionKernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                         const T* __restrict__ mask, T* __restrict__ y, Geometry g,
                         bool vectorized) {
  __shared__ __align__(16) T keys[kBlockKeys][DP + kPad];
  __shared__ __align__(16) T valuesT[DP][kBlockKeys + kPad];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, t = lane % 4;
  for (int64_t n = blockIdx.y; n < g.count; n += gridDim.y) {
    const at::Offsets off = at::offsetsOf(g, n);
    const T* qn = q + off.q;
    const T* mn = mask ? mask + off.mask : nullptr;
    const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kBlockRows + warp * 16 + group;
    const int64_t r1 = r0 + 8;

    // This warp's 16 rows of Q as A fragments, one per 16 columns of the head.
    uint32_t qa[DP / 16][4];
#pragma unroll
    for (int kk = 0; kk < DP / 16; ++kk) {
      const int64_t c = kk * 16 + 2 * t;
      qa[kk][0] = queryPair(qn, g, r0, c);
      qa[kk][1] = queryPair(qn, g, r1, c);
      qa[kk][2] = queryPair(qn, g, r0, c + 8);
      qa[kk][3] = queryPair(qn, g, r1, c + 8);
    }
    float o[DP / 8][4];
#pragma unroll
    for (int nt = 0; nt < DP / 8; ++nt) o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0.f;
    float max0 = -INFINITY, max1 = -INFINITY, sum0 = 0.f, sum1 = 0.f;

    for (int64_t j0 = 0; j0 < g.sk; j0 += kBlockKeys) {
      __syncthreads();  // every warp is done with the previous block
      loadKeyBlock<T, DP>(k + off.k, v + off.v, g, j0, vectorized, keys, valuesT);
      __syncthreads();

      // S = Q K^T for this block: 8 tiles of 8 keys.
      float s[kBlockKeys / 8][4];
#pragma unroll
      for (int nt = 0; nt < kBlockKeys / 8; ++nt) {
        s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < DP / 16; ++kk) {
          const T* kr = &keys[nt * 8 + group][kk * 16 + 2 * t];
          mma16816<T>(s[nt], qa[kk], sharedPair(kr), sharedPair(kr + 8));
        }
      }
      // Scale, mask, keys past the end; the block's row maxima.
      float blockMax0 = -INFINITY, blockMax1 = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < kBlockKeys / 8; ++nt) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int64_t row = r < 2 ? r0 : r1;
          const int64_t col = j0 + nt * 8 + 2 * t + (r & 1);
          float value = -INFINITY;
          if (col < g.sk) {
            const float add = mn && row < g.sq ? toFloat(mn[at::maskIndex(g, row, col)]) : 0.f;
            value = at::score(s[nt][r], g.scale, add);
          }
          s[nt][r] = value;
          if (r < 2)
            blockMax0 = fmaxf(blockMax0, value);
          else
            blockMax1 = fmaxf(blockMax1, value);
        }
      }
      const float newMax0 = fmaxf(max0, quadMax(blockMax0));
      const float newMax1 = fmaxf(max1, quadMax(blockMax1));
      const float ref0 = at::referencePoint(newMax0), ref1 = at::referencePoint(newMax1);
      const float alpha0 = expf(max0 - ref0), alpha1 = expf(max1 - ref1);
      max0 = newMax0;
      max1 = newMax1;
      float add0 = 0.f, add1 = 0.f;
#pragma unroll
      for (int nt = 0; nt < kBlockKeys / 8; ++nt) {
        s[nt][0] = expf(s[nt][0] - ref0);
        s[nt][1] = expf(s[nt][1] - ref0);
        s[nt][2] = expf(s[nt][2] - ref1);
        s[nt][3] = expf(s[nt][3] - ref1);
        add0 += s[nt][0] + s[nt][1];
        add1 += s[nt][2] + s[nt][3];
      }
      // Each thread sums its own columns; the quad's partial sums meet at the end (alpha is the
      // same in the four threads of a row, so the partial sums scale alike).
      sum0 = sum0 * alpha0 + add0;
      sum1 = sum1 * alpha1 + add1;
#pragma unroll
      for (int nt = 0; nt < DP / 8; ++nt) {
        o[nt][0] *= alpha0;
        o[nt][1] *= alpha0;
        o[nt][2] *= alpha1;
        o[nt][3] *= alpha1;
      }
      // O += P V: the score accumulators of two neighbouring key tiles are, register for
      // register, the A fragment of a 16-key step.
#pragma unroll
      for (int ks = 0; ks < kBlockKeys / 16; ++ks) {
        const uint32_t pa[4] = {packPair<T>(s[2 * ks][0], s[2 * ks][1]),
                                packPair<T>(s[2 * ks][2], s[2 * ks][3]),
                                packPair<T>(s[2 * ks + 1][0], s[2 * ks + 1][1]),
                                packPair<T>(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
        for (int nt = 0; nt < DP / 8; ++nt) {
          const T* vr = &valuesT[nt * 8 + group][ks * 16 + 2 * t];
          mma16816<T>(o[nt], pa, sharedPair(vr), sharedPair(vr + 8));
        }
      }
    }
    // A row whose scores were all -inf has sum 0 and o 0: 0 / 0 is the NaN the Softmax layer
    // gives (attention_semantics.h).
    const float total0 = quadSum(sum0), total1 = quadSum(sum1);
    T* yn = y + n * g.sq * g.dv;
#pragma unroll
    for (int nt = 0; nt < DP / 8; ++nt) {
      const int64_t c = nt * 8 + 2 * t;
      for (int half = 0; half < 2; ++half) {
        const int64_t row = half ? r1 : r0;
        if (row >= g.sq) continue;
        const float total = half ? total1 : total0;
        if (c < g.dv) yn[row * g.dv + c] = fromFloat<T>(o[nt][2 * half] / total);
        if (c + 1 < g.dv) yn[row * g.dv + c + 1] = fromFloat<T>(o[nt][2 * half + 1] / total);
      }
    }
  }
}

// The padded head size the kernel is compiled for: the smallest of 32, 64, 96, 128 that holds D
// and Dv, or 0 when they are larger.
int paddedHeadSize(const Geometry& g) {
  const int64_t h = g.d > g.dv ? g.d : g.dv;
  for (int p : {32, 64, 96, 128})
    if (h <= p) return p;
  return 0;
}

template <class T, int DP>
Status launchFlash(const Geometry& g, const void* const* in, void* const* out,
                   const RunContext& ctx) {
  const bool vectorized = !g.keyTransposed && g.d == DP && g.dv == DP &&
                          reinterpret_cast<uintptr_t>(in[1]) % 16 == 0 &&
                          reinterpret_cast<uintptr_t>(in[2]) % 16 == 0;
  const dim3 grid(static_cast<unsigned>((g.sq + kBlockRows - 1) / kBlockRows),
                  static_cast<unsigned>(g.count < 65535 ? g.count : 65535));
  flashAttentionKernel<T, DP><<<grid, kWarps * 32, 0, static_cast<cudaStream_t>(ctx.stream)>>>(
      static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), static_cast<const T*>(in[2]),
      g.hasMask ? static_cast<const T*>(in[3]) : nullptr, static_cast<T*>(out[0]), g, vectorized);
  KILN_CHECK_LAUNCH("attention_flash_mma");
  return Status::ok();
}

template <class T>
Status runFlash(const Geometry& g, int padded, const void* const* in, void* const* out,
                const RunContext& ctx) {
  switch (padded) {
    case 32:
      return launchFlash<T, 32>(g, in, out, ctx);
    case 64:
      return launchFlash<T, 64>(g, in, out, ctx);
    case 96:
      return launchFlash<T, 96>(g, in, out, ctx);
    default:
      return launchFlash<T, 128>(g, in, out, ctx);
  }
}

std::unique_ptr<Kernel> createFlash(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, "flash_mma", g, whyNot)) return nullptr;
  const DataType type = c.inputs[0].type;
  if (type != DataType::kHALF && type != DataType::kBF16) {
    if (whyNot) *whyNot = std::string("flash_mma: fp16 and bf16 only, got ") + dataTypeName(type);
    return nullptr;
  }
  if (g.zeroNanRows) {
    if (whyNot)
      *whyNot =
          "flash_mma: no zeroNanRows guard in this kernel (unfused_cublas and the reference "
          "run it)";
    return nullptr;
  }
  const int padded = paddedHeadSize(g);
  if (padded == 0) {
    if (whyNot)
      *whyNot = "flash_mma: head sizes up to 128, got D = " + std::to_string(g.d) +
                ", Dv = " + std::to_string(g.dv);
    return nullptr;
  }
  using Types =
      ElementTypes<Stored<DataType::kHALF, __half>, Stored<DataType::kBF16, __nv_bfloat16>>;
  return makeTypedKernel<Types>(
      type, [g, padded](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        if (ctx.emulate)
          return unsupported("attention flash_mma: a tensor-core kernel, no host emulation");
        if (g.count == 0 || g.sq == 0) return Status::ok();
        return runFlash<decltype(tag)>(g, padded, in, out, ctx);
      });
}

// ---- unfused_cublas --------------------------------------------------------------------------

// One warp per score row, in place: s = s + mask, then the Softmax layer's softmax in FP32.
template <class T>
__global__ void maskedSoftmaxRows(T* scores, const T* mask, Geometry g) {
  const int64_t rows = g.count * g.sq;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       r < rows; r += warps) {
    const int64_t n = r / g.sq, i = r % g.sq;
    T* s = scores + r * g.sk;
    const T* m = mask ? mask + at::offsetsOf(g, n).mask : nullptr;
    auto value = [&](int64_t j) {
      return toFloat(s[j]) + (m ? toFloat(m[at::maskIndex(g, i, j)]) : 0.f);
    };
    float mx = -INFINITY;
    for (int64_t j = lane; j < g.sk; j += 32) mx = fmaxf(mx, value(j));
    for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float sum = 0.f;
    for (int64_t j = lane; j < g.sk; j += 32) sum += ops::softmax::sumTerm(value(j), mx);
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    // With zeroNanRows a NaN row's probabilities are 0, and the product weighs V by them.
    const bool zeroed = g.zeroNanRows && at::nanRow(sum);
    for (int64_t j = lane; j < g.sk; j += 32)
      s[j] = fromFloat<T>(zeroed ? 0.f : ops::softmax::softmaxValue(value(j), mx, sum));
  }
}

class UnfusedCublas final : public Kernel {
 public:
  UnfusedCublas(const Geometry& g, DataType type, int64_t qStride, int64_t kStride, int64_t vStride)
      : g_(g), type_(type), qStride_(qStride), kStride_(kStride), vStride_(vStride) {}

  size_t workspaceSize() const override {
    return static_cast<size_t>(g_.count * g_.sq * g_.sk) * elementSize();
  }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (g_.count == 0 || g_.sq == 0) return Status::ok();
    cublasHandle_t h = nullptr;
    KILN_RETURN_IF_ERROR(cublasHandleFor(ctx, h));
    const cudaDataType_t t = cublasDataType(type_);
    const float zero = 0.f, one = 1.f;
    const int sq = static_cast<int>(g_.sq), sk = static_cast<int>(g_.sk);
    const int d = static_cast<int>(g_.d), dv = static_cast<int>(g_.dv);
    const int count = static_cast<int>(g_.count);
    // Row-major matrices are column-major transposes: S^T [sk, sq] = op(K) Q^T.
    KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        h, g_.keyTransposed ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, sk, sq, d, &g_.scale, in[1],
        t, g_.keyTransposed ? sk : d, kStride_, in[0], t, d, qStride_, &zero, workspace, t, sk,
        g_.sq * g_.sk, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    const auto stream = static_cast<cudaStream_t>(ctx.stream);
    const int64_t rows = g_.count * g_.sq;
    const int64_t blocks = std::min<int64_t>((rows + 7) / 8, 65536);
    if (type_ == DataType::kFLOAT)
      maskedSoftmaxRows<float><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
          static_cast<float*>(workspace), g_.hasMask ? static_cast<const float*>(in[3]) : nullptr,
          g_);
    else
      maskedSoftmaxRows<__half><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
          static_cast<__half*>(workspace), g_.hasMask ? static_cast<const __half*>(in[3]) : nullptr,
          g_);
    KILN_CHECK_LAUNCH("attention_masked_softmax");
    // O^T [dv, sq] = V^T P^T.
    KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, dv, sq, sk, &one,
                                                 in[2], t, dv, vStride_, workspace, t, sk,
                                                 g_.sq * g_.sk, &zero, out[0], t, dv, g_.sq * g_.dv,
                                                 count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

 private:
  size_t elementSize() const { return type_ == DataType::kFLOAT ? 4 : 2; }

  Geometry g_;
  DataType type_;
  int64_t qStride_, kStride_, vStride_;
};

// The one stride between consecutive batch indices' matrices of an input (0: shared by all), or
// false when its broadcasting needs more than one (then cuBLAS's strided batch cannot read it).
bool uniformStride(const Geometry& g, const int64_t* strides, int64_t matrix, int64_t* stride) {
  bool shared = true, perIndex = true;
  int64_t expect = matrix;
  for (int32_t i = g.batchRank - 1; i >= 0; --i) {
    if (g.batch[i] == 1) continue;
    shared = shared && strides[i] == 0;
    perIndex = perIndex && strides[i] == expect;
    expect *= g.batch[i];
  }
  *stride = shared ? 0 : matrix;
  return shared || perIndex;
}

std::unique_ptr<Kernel> createUnfused(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, "unfused_cublas", g, whyNot)) return nullptr;
  const DataType type = c.inputs[0].type;
  if (!cublasSupportsType(type, whyNot)) return nullptr;
  for (int64_t v : {g.sq, g.sk, g.d, g.dv, g.count, g.sq * g.sk, g.sq * g.dv}) {
    if (!fitsInt32(v)) {
      if (whyNot) *whyNot = "unfused_cublas: a dimension or the batch exceeds 32-bit int";
      return nullptr;
    }
  }
  int64_t qs = 0, ks = 0, vs = 0;
  if (!uniformStride(g, g.qStride, g.sq * g.d, &qs) ||
      !uniformStride(g, g.kStride, g.sk * g.d, &ks) ||
      !uniformStride(g, g.vStride, g.sk * g.dv, &vs)) {
    if (whyNot) *whyNot = "unfused_cublas: Q, K or V broadcast over some batch dims only";
    return nullptr;
  }
  return std::make_unique<UnfusedCublas>(g, type, qs, ks, vs);
}

constexpr Tactic kTactics[] = {{"flash_mma", &createFlash},
                               {"unfused_cublas", &createUnfused},
                               {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda::attention

std::span<const kiln::Tactic> kiln::ops::Attention::cudaTactics() {
  return cuda::attention::kTactics;
}
