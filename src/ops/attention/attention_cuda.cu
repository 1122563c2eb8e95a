// Attention on CUDA. Tactics, fastest first (the builder times those that accept a layer):
//   flash_mma       fp16/bf16, head sizes up to 128: one thread block of 4 warps per 64 query
//                   rows of one batch index, looping over blocks of 64 keys, double-buffered in
//                   shared memory (cp.async: the next block lands while this one is used). Each
//                   warp holds its 16 rows of Q and of the output in registers; K and V reach the
//                   tensor cores through ldmatrix (V transposed on the way); the scores Q K^T and
//                   the product P V run on tensor cores (mma.sync m16n8k16, FP32 accumulation), and
//                   the online softmax of attention_semantics.h runs between them in FP32 on the
//                   score fragments, so the score matrix never reaches device memory. Only the
//                   probabilities are rounded to the storage type, as the A operand of P V.
//                   Warps past Sq and key steps past Sk are skipped with warp-uniform branches
//                   outside the unrolled loops, and every index is 32-bit: at short sequences
//                   the kernel is bound by instruction issue, not by the tensor cores.
//   flash_mma_8w    the same with 8 warps per block (128 query rows): each key block crosses
//                   from L2 once for twice the rows, at the price of more idle warps in a
//                   sequence's last block.
//   flash_mma_8w_resident  Sk up to 256 (ViT's 197 tokens, BERT's 128): flash_mma_8w with all of
//                   K and V in shared memory, every key block's copy started at once, one
//                   barrier per key block.
//   cudnn_sdpa      fp16/bf16 without a mask: cuDNN's fused attention operation
//                   (attention_cudnn_cuda.cpp).
//   unfused_cublas  fp32/fp16: the chain the fusion replaced, as one kernel: S = scale Q K^T by
//                   cuBLAS into the workspace, the mask add and softmax (FP32) in place, O = S V
//                   by cuBLAS (strided batches, or pointer arrays where head views or a partial
//                   broadcast leave no one stride between batch indices). It is what FP32
//                   networks use, and the yardstick by which the timing decides that the fused
//                   kernel is worth it.
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
#include "backends/cuda/mma_sync.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "core/approximate_math.h"
#include "ops/attention/attention_cuda.h"
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
      dot += toFloat(q[o.q + i * g.qRow + e]) * toFloat(k[o.k + at::keyIndex(g, j, e)]);
    const float add = mask ? toFloat(mask[o.mask + at::maskIndex(g, i, j)]) : 0.f;
    return at::score(dot, g.scale, add);
  }

  // Output element `index` of the logical [count, Sq, Dv]: the Softmax layer's one-pass softmax
  // over the row's scores, then the weighted sum of V's column.
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
      acc += p * toFloat(v[o.v + j * g.vRow + e]);
    }
    if (g.zeroNanRows && at::nanRow(sum)) {  // V weighed by zeros
      acc = 0.f;
      for (int64_t j = 0; j < g.sk; ++j) acc += 0.f * toFloat(v[o.v + j * g.vRow + e]);
      sum = 1.f;
    }
    y[o.y + i * g.yRow + e] = fromFloat<T>(acc / sum);
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

// A thread block is W warps of 16 query rows each: 4 (flash_mma) or 8 (flash_mma_8w, which
// reads each key block from L2 once for 128 rows instead of 64).
template <int W>
constexpr int blockRows() {
  return 16 * W;
}
constexpr int kBlockKeys = 64;  // keys per step
constexpr int kPad = 8;         // shared-memory row padding: conflict-free ldmatrix rows
constexpr float kLog2e = 1.4426950408889634f;

// One stage of the K/V pipeline: K and V row-major, [kBlockKeys][DP + kPad] each.
template <int DP>
constexpr size_t stageElements() {
  return size_t(2) * kBlockKeys * (DP + kPad);
}
// flash_mma_8w_resident: sequences of up to this many key blocks (256 keys) keep all of K and V in
// shared memory, one stage per block, every block's copy started before the first is used.
constexpr int kResidentBlocks = 4;
template <class T, int DP, bool kResident>
constexpr size_t sharedBytes() {
  // Else two stages: the next block loads while this one is used.
  return (kResident ? kResidentBlocks : 2) * stageElements<DP>() * sizeof(T);
}

// waitAsync<pending> for a run-time count of 0 to kResidentBlocks - 1.
__device__ inline void waitAsyncAtMost(int pending) {
  switch (pending) {
    case 0:
      waitAsync<0>();
      break;
    case 1:
      waitAsync<1>();
      break;
    case 2:
      waitAsync<2>();
      break;
    default:
      waitAsync<3>();
  }
}
static_assert(kResidentBlocks == 4, "waitAsyncAtMost covers pending counts below 4");

// The softmax's 2^x is the hardware's approximation alone (approximateExp2 of
// core/approximate_math.h: a result below 2^-126 flushed to 0). exp2f adds the instructions that
// keep subnormal results; here every exponential is a probability relative to its row's maximum
// (whose term is 1), rounded to FP16 or BF16 before it is used, so such a term is 0 either way.

// The largest of v over the 4 threads that hold one row of a fragment (a "quad").
__device__ inline float quadMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ inline float quadSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// One batch index's matrices as the kernel indexes them. Every offset inside them fits an int
// (createFlash checks), so the kernel's index arithmetic is 32-bit: at transformer shapes it is
// bound by instruction issue, and a 64-bit product or compare costs two or three instructions
// where a 32-bit one costs one. `vectorized` (d == dv == DP, K not transposed, every row of Q, K,
// V and O 16-byte aligned) takes 16-byte cp.async rows for K and V and 32-bit loads and stores of
// element pairs for Q and O.
template <class T>
struct FlashMatrices {
  const T* q;
  const T* k;
  const T* v;
  const T* mask;  // nullptr without a mask
  T* y;
  int sq, sk, d, dv;
  int qRow, kRow, vRow, yRow;
  int maskRow, maskCol;  // the mask's strides along Sq and Sk
  bool keyTransposed, vectorized;
  bool zeroNanRows;  // AttentionParams::zeroNanRows (storeOutput)
};

// Starts filling keys[j][e] = K(j0 + j, e) and values[j][e] = V(j0 + j, e), zero outside the
// matrices. Vectorized: 16-byte cp.async copies that land while the block computes on the other
// stage; else plain loads, complete when the next barrier is passed.
template <class T, int DP, int W>
__device__ inline void loadKeyBlock(const FlashMatrices<T>& m, int j0, T* keys, T* values) {
  constexpr int kRow = DP + kPad;
  if (m.vectorized) {
    constexpr int kVec = 8, kPerRow = DP / kVec, kChunks = kBlockKeys * kPerRow;
    static_assert(kChunks % (W * 32) == 0, "whole passes of the block's threads");
#pragma unroll
    for (int pass = 0; pass < kChunks / (W * 32); ++pass) {
      const int idx = threadIdx.x + pass * W * 32;
      const int j = idx / kPerRow, e = idx % kPerRow * kVec;
      const bool inside = j0 + j < m.sk;
      // Outside, the (unread) source address stays inside the matrix.
      const int row = inside ? j0 + j : 0;
      copy16Async(keys + j * kRow + e, m.k + row * m.kRow + e, inside);
      copy16Async(values + j * kRow + e, m.v + row * m.vRow + e, inside);
    }
    return;
  }
  const T zero = fromFloat<T>(0.f);
  for (int idx = threadIdx.x; idx < kBlockKeys * DP; idx += blockDim.x) {
    // Consecutive threads read consecutive addresses of K in either layout.
    const int j = m.keyTransposed ? idx % kBlockKeys : idx / DP;
    const int e = m.keyTransposed ? idx / kBlockKeys : idx % DP;
    const int jj = j0 + j;
    const bool inside = jj < m.sk && e < m.d;
    keys[j * kRow + e] = inside ? m.k[m.keyTransposed ? e * m.sk + jj : jj * m.kRow + e] : zero;
  }
  for (int idx = threadIdx.x; idx < kBlockKeys * DP; idx += blockDim.x) {
    const int j = idx / DP, e = idx % DP;
    const int jj = j0 + j;
    values[j * kRow + e] = jj < m.sk && e < m.dv ? m.v[jj * m.vRow + e] : zero;
  }
}

// Fragment layout (PTX ISA, m16n8k16): lane = 4 * group + t. In a 16x8 accumulator, registers 0
// and 1 are row `group`, columns 2t and 2t + 1; registers 2 and 3 are row group + 8. So each
// thread holds two rows (group and group + 8) of its warp's 16 query rows, and the four threads
// of a quad together hold a row's 8 columns of every tile.
struct Lane {
  int group, t;           // as above
  int matrixRow, matrix;  // the row (of 8) and the matrix (of 4) this lane addresses in ldmatrix
  int rows[2];            // this thread's two query rows
};

// This warp's rows of Q as A fragments, one per 16 columns of the head (0 outside the matrix).
template <class T, int DP>
__device__ inline void loadQuery(uint32_t (&qa)[DP / 16][4], const FlashMatrices<T>& m,
                                 const Lane& l) {
#pragma unroll
  for (int kk = 0; kk < DP / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = l.rows[r % 2], col = kk * 16 + 2 * l.t + (r / 2) * 8;
      const T* at = m.q + row * m.qRow + col;
      if (m.vectorized) {
        qa[kk][r] = row < m.sq ? *reinterpret_cast<const uint32_t*>(at) : 0u;
      } else {
        const bool inRow = row < m.sq;
        const float a = inRow && col < m.d ? toFloat(at[0]) : 0.f;
        const float b = inRow && col + 1 < m.d ? toFloat(at[1]) : 0.f;
        qa[kk][r] = packPair<T>(a, b);
      }
    }
}

// A thread's running softmax state of its two rows and their unnormalised output.
template <int DP>
struct RowState {
  float o[DP / 8][4];
  float max[2];  // in the log2 domain: the score times log2(e)
  float sum[2];  // this thread's columns' part of the sum of exponentials
};

// One key block for one warp: S = Q K^T on the tensor cores, the online softmax of
// attention_semantics.h on the score fragments in FP32, O += P V. NK16 is the number of 16-key
// steps the block has keys in (4 for a whole block); kPartial marks the last block, whose keys
// past `left` score -inf. Both are compile-time, so that the tail of a sequence costs only the
// steps it has (at ViT's 197 tokens the last block holds 5 keys) without a branch inside the
// unrolled loops.
//
// The softmax runs in the log2 domain: x = (scale dot + mask) log2(e) as one multiply (and one
// fused multiply-add for the mask), then exp(s - m) = 2^(x - m log2(e)). That rounds differently
// from scale * dot + mask in the last bit of FP32 only.
template <class T, int DP, int NK16, bool kPartial, bool kMasked>
__device__ inline void attendKeyBlock(const T* keys, const T* values,
                                      const uint32_t (&qa)[DP / 16][4], RowState<DP>& st,
                                      const Lane& l, float scaleLog2, const T* const (&maskRows)[2],
                                      int maskCol, int j0, int left) {
  constexpr int kRow = DP + kPad;
  constexpr int NT = 2 * NK16;  // tiles of 8 keys
  float s[NT][4];
  // One ldmatrix gives a key tile's B fragments for two 16-column steps of the head.
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < DP / 16; kk += 2) {
      uint32_t b[4];
      loadMatrices(b, keys + (nt * 8 + l.matrixRow) * kRow + kk * 16 + l.matrix * 8);
      mma16816<T>(s[nt], qa[kk], b[0], b[1]);
      mma16816<T>(s[nt], qa[kk + 1], b[2], b[3]);
    }
  }
  float blockMax[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int nt = 0; nt < NT; ++nt)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int col = nt * 8 + 2 * l.t + (r & 1);
      float x = s[nt][r] * scaleLog2;
      if (kPartial && col >= left) {
        x = -INFINITY;
      } else if constexpr (kMasked) {
        x = fmaf(toFloat(maskRows[r / 2][(j0 + col) * maskCol]), kLog2e, x);
      }
      s[nt][r] = x;
      blockMax[r / 2] = fmaxf(blockMax[r / 2], x);
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float newMax = fmaxf(st.max[h], quadMax(blockMax[h]));
    const float ref = at::referencePoint(newMax);
    const float alpha = approximateExp2(st.max[h] - ref);
    st.max[h] = newMax;
    float add = 0.f;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      s[nt][2 * h] = approximateExp2(s[nt][2 * h] - ref);
      s[nt][2 * h + 1] = approximateExp2(s[nt][2 * h + 1] - ref);
      add += s[nt][2 * h] + s[nt][2 * h + 1];
    }
    // Each thread sums its own columns; the quad's partial sums meet at the end (alpha is the
    // same in the four threads of a row, so the partial sums scale alike).
    st.sum[h] = st.sum[h] * alpha + add;
#pragma unroll
    for (int nt = 0; nt < DP / 8; ++nt) {
      st.o[nt][2 * h] *= alpha;
      st.o[nt][2 * h + 1] *= alpha;
    }
  }
  // The score accumulators of two neighbouring key tiles are, register for register, the A
  // fragment of a 16-key step. One transposing ldmatrix gives the B fragments of two 8-column
  // tiles of V.
#pragma unroll
  for (int ks = 0; ks < NK16; ++ks) {
    const uint32_t pa[4] = {packPair<T>(s[2 * ks][0], s[2 * ks][1]),
                            packPair<T>(s[2 * ks][2], s[2 * ks][3]),
                            packPair<T>(s[2 * ks + 1][0], s[2 * ks + 1][1]),
                            packPair<T>(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
    for (int nt = 0; nt < DP / 8; nt += 2) {
      uint32_t b[4];
      loadMatricesTransposed(b, values + (ks * 16 + (l.matrix & 1) * 8 + l.matrixRow) * kRow +
                                    (nt + l.matrix / 2) * 8);
      mma16816<T>(st.o[nt], pa, b[0], b[1]);
      mma16816<T>(st.o[nt + 1], pa, b[2], b[3]);
    }
  }
}

// O = o / sum for this thread's rows inside Sq. A row whose scores were all -inf has sum 0 and o
// 0: 0 * (1 / 0) is the NaN the Softmax layer gives (attention_semantics.h). With zeroNanRows
// such a row (sum 0 or NaN) is instead the sum over keys of 0 * V: 0, or NaN where V's column
// holds an infinity or NaN. Such rows are rare (a query whose every key is masked), so the warps
// that have one read V's columns again from global memory, and no other warp pays for it.
template <class T, int DP>
__device__ inline void storeOutput(const RowState<DP>& st, const FlashMatrices<T>& m,
                                   const Lane& l) {
  float total[2] = {quadSum(st.sum[0]), quadSum(st.sum[1])};
  bool zeroRow[2] = {false, false};
  float zeros[DP / 8][2] = {};
  if (m.zeroNanRows) {
    for (int h = 0; h < 2; ++h) zeroRow[h] = l.rows[h] < m.sq && at::nanRow(total[h]);
    if (__any_sync(0xffffffffu, zeroRow[0] || zeroRow[1])) {
      for (int j = 0; j < m.sk; ++j)
#pragma unroll
        for (int nt = 0; nt < DP / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int c = nt * 8 + 2 * l.t + e;
            if (c < m.dv) zeros[nt][e] += 0.f * toFloat(m.v[j * m.vRow + c]);
          }
    }
  }
  const float inverse[2] = {1.f / total[0], 1.f / total[1]};
#pragma unroll
  for (int nt = 0; nt < DP / 8; ++nt) {
    const int c = nt * 8 + 2 * l.t;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = l.rows[h];
      if (row >= m.sq) continue;
      const float a = zeroRow[h] ? zeros[nt][0] : st.o[nt][2 * h] * inverse[h];
      const float b = zeroRow[h] ? zeros[nt][1] : st.o[nt][2 * h + 1] * inverse[h];
      T* at = m.y + row * m.yRow + c;
      if (m.vectorized) {
        *reinterpret_cast<uint32_t*>(at) = packPair<T>(a, b);
      } else {
        if (c < m.dv) at[0] = fromFloat<T>(a);
        if (c + 1 < m.dv) at[1] = fromFloat<T>(b);
      }
    }
  }
}

// Blocks per SM the register budget is made for: 16 warps for head sizes up to 64 (at most 128
// registers: 16 warps to hide the latency of each warp's mma -> softmax -> mma chain), else
// whatever the kernel needs.
template <int DP, int W>
constexpr int minBlocksPerSm() {
  return DP <= 64 ? 16 / W : 1;
}

// One thread block: 16 query rows per warp of one batch index; the grid's y walks the batch
// indices. A warp whose rows all lie past Sq (in the last block of a sequence that is not a
// multiple of the block's rows) takes its share of the loads and barriers and computes nothing.
// kResident (Sk <= 256): every key block's copy is started at once, each into its own stage, and
// each step waits only for its own: one barrier per key block instead of two, and no step waits
// for a refill. Nsight Compute on ViT-B/16's attention (H100) had the two-stage kernel's warps
// stalled at barriers in 18% of samples.
template <class T, int DP, int W, bool kMasked, bool kResident>
__global__ void __launch_bounds__(W * 32, minBlocksPerSm<DP, W>())
    flashAttentionKernel(FlashMatrices<T> base, Geometry g) {
  constexpr int kRow = DP + kPad;
  extern __shared__ __align__(16) unsigned char sharedRaw[];
  T* const stages = reinterpret_cast<T*>(sharedRaw);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  Lane l;
  l.group = lane / 4;
  l.t = lane % 4;
  l.matrixRow = lane % 8;
  l.matrix = lane / 8;
  const int warpRow = static_cast<int>(blockIdx.x) * blockRows<W>() + warp * 16;
  l.rows[0] = warpRow + l.group;
  l.rows[1] = l.rows[0] + 8;
  const bool active = warpRow < base.sq;
  const float scaleLog2 = g.scale * kLog2e;
  const int count = static_cast<int>(g.count);
  for (int n = blockIdx.y; n < count; n += gridDim.y) {
    const at::Offsets off = at::offsetsOf(g, n);
    FlashMatrices<T> m = base;
    m.q += off.q;
    m.k += off.k;
    m.v += off.v;
    m.y += off.y;
    const T* maskRows[2] = {nullptr, nullptr};
    if constexpr (kMasked) {
      // Rows past Sq read the last row's mask: their results are not stored.
      for (int h = 0; h < 2; ++h)
        maskRows[h] = m.mask + off.mask + min(l.rows[h], m.sq - 1) * m.maskRow;
    }
    uint32_t qa[DP / 16][4];
    loadQuery<T, DP>(qa, m, l);
    RowState<DP> st;
#pragma unroll
    for (int nt = 0; nt < DP / 8; ++nt) st.o[nt][0] = st.o[nt][1] = st.o[nt][2] = st.o[nt][3] = 0.f;
    st.max[0] = st.max[1] = -INFINITY;
    st.sum[0] = st.sum[1] = 0.f;

    __syncthreads();  // the previous batch index is done with the stages
    const int blocks = (m.sk + kBlockKeys - 1) / kBlockKeys;
    if constexpr (kResident) {
      for (int b = 0; b < blocks; ++b) {
        T* const keys = stages + b * stageElements<DP>();
        loadKeyBlock<T, DP, W>(m, b * kBlockKeys, keys, keys + kBlockKeys * kRow);
        commitAsync();
      }
    } else {
      loadKeyBlock<T, DP, W>(m, 0, stages, stages + kBlockKeys * kRow);
      commitAsync();
    }
    int stage = 0;
    for (int j0 = 0, b = 0; j0 < m.sk; j0 += kBlockKeys, ++b) {
      T* const keys = stages + (kResident ? b : stage) * stageElements<DP>();
      T* const values = keys + kBlockKeys * kRow;
      if constexpr (kResident) {
        waitAsyncAtMost(blocks - 1 - b);  // this block's copies have landed (later ones may not)
      } else {
        // The next block streams into the other stage while this one is used.
        if (j0 + kBlockKeys < m.sk) {
          T* const next = stages + (stage ^ 1) * stageElements<DP>();
          loadKeyBlock<T, DP, W>(m, j0 + kBlockKeys, next, next + kBlockKeys * kRow);
        }
        commitAsync();
        waitAsync<1>();  // this block's copies have landed (the next block's may be in flight)
      }
      __syncthreads();
      if (active) {
        const int left = m.sk - j0;
#define KILN_ATTEND(NK16, PARTIAL)                                                            \
  attendKeyBlock<T, DP, NK16, PARTIAL, kMasked>(keys, values, qa, st, l, scaleLog2, maskRows, \
                                                m.maskCol, j0, left)
        if (left >= kBlockKeys)
          KILN_ATTEND(4, false);
        else if (left > 48)
          KILN_ATTEND(4, true);
        else if (left > 32)
          KILN_ATTEND(3, true);
        else if (left > 16)
          KILN_ATTEND(2, true);
        else
          KILN_ATTEND(1, true);
#undef KILN_ATTEND
      }
      if constexpr (!kResident) {
        __syncthreads();  // every warp is done with this stage before it is refilled
        stage ^= 1;
      }
    }
    waitAsync<0>();
    if (active) storeOutput<T, DP>(st, m, l);
  }
}

// Whether every row of a 16-bit tensor starts 16-byte aligned: its base, its row stride and its
// batch strides all multiples of 8 elements.
bool rowsAligned(const void* data, int64_t base, int64_t row, const int64_t* strides,
                 int32_t batchRank) {
  bool aligned = reinterpret_cast<uintptr_t>(data) % 16 == 0 && base % 8 == 0 && row % 8 == 0;
  for (int32_t i = 0; i < batchRank; ++i) aligned = aligned && strides[i] % 8 == 0;
  return aligned;
}

// Whether every offset flash_mma computes inside one batch index's matrices, and the batch count,
// fit an int (its index arithmetic is 32-bit).
bool fitsInt(const Geometry& g) {
  constexpr int64_t kMax = INT32_MAX;
  const int64_t keyExtent = g.keyTransposed ? g.d * g.sk : g.sk * g.kRow;
  const int64_t maskExtent = g.sq * g.maskRowStride + g.sk * g.maskColStride;
  return g.count <= kMax && g.sq + blockRows<8>() <= kMax && g.sk + kBlockKeys <= kMax &&
         g.sq * g.qRow <= kMax && keyExtent <= kMax && g.sk * g.vRow <= kMax &&
         g.sq * g.yRow <= kMax && maskExtent <= kMax;
}

// The padded head size the kernel is compiled for: the smallest of 32, 64, 96, 128 that holds D
// and Dv, or 0 when they are larger.
int paddedHeadSize(const Geometry& g) {
  const int64_t h = g.d > g.dv ? g.d : g.dv;
  for (int p : {32, 64, 96, 128})
    if (h <= p) return p;
  return 0;
}

template <class T, int DP, int W, bool kResident, bool kMasked>
Status launchFlash(const Geometry& g, const FlashMatrices<T>& m, const RunContext& ctx) {
  constexpr size_t bytes = sharedBytes<T, DP, kResident>();
  // Above 48 KiB a kernel must opt in to its dynamic shared memory (once per kernel; cheap).
  if constexpr (bytes > 48 * 1024) {
    static const cudaError_t optIn =
        cudaFuncSetAttribute(flashAttentionKernel<T, DP, W, kMasked, kResident>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
    if (optIn != cudaSuccess)
      return internalError(std::string("attention_flash_mma: ") + cudaGetErrorString(optIn));
  }
  const dim3 grid(static_cast<unsigned>((g.sq + blockRows<W>() - 1) / blockRows<W>()),
                  static_cast<unsigned>(g.count < 65535 ? g.count : 65535));
  flashAttentionKernel<T, DP, W, kMasked, kResident>
      <<<grid, W * 32, bytes, static_cast<cudaStream_t>(ctx.stream)>>>(m, g);
  KILN_CHECK_LAUNCH("attention_flash_mma");
  return Status::ok();
}

template <class T, int DP, int W, bool kResident>
Status launchFlash(const Geometry& g, const FlashMatrices<T>& m, const RunContext& ctx) {
  return m.mask ? launchFlash<T, DP, W, kResident, true>(g, m, ctx)
                : launchFlash<T, DP, W, kResident, false>(g, m, ctx);
}

template <class T, int W, bool kResident>
Status runFlash(const Geometry& g, int padded, const void* const* in, void* const* out,
                const RunContext& ctx) {
  FlashMatrices<T> m;
  m.q = static_cast<const T*>(in[0]);
  m.k = static_cast<const T*>(in[1]);
  m.v = static_cast<const T*>(in[2]);
  m.mask = g.hasMask ? static_cast<const T*>(in[3]) : nullptr;
  m.y = static_cast<T*>(out[0]);
  m.sq = static_cast<int>(g.sq);
  m.sk = static_cast<int>(g.sk);
  m.d = static_cast<int>(g.d);
  m.dv = static_cast<int>(g.dv);
  m.qRow = static_cast<int>(g.qRow);
  m.kRow = static_cast<int>(g.kRow);
  m.vRow = static_cast<int>(g.vRow);
  m.yRow = static_cast<int>(g.yRow);
  m.maskRow = static_cast<int>(g.maskRowStride);
  m.maskCol = static_cast<int>(g.maskColStride);
  m.keyTransposed = g.keyTransposed;
  m.zeroNanRows = g.zeroNanRows;
  m.vectorized = !g.keyTransposed && g.d == padded && g.dv == padded &&
                 rowsAligned(in[0], g.qBase, g.qRow, g.qStride, g.batchRank) &&
                 rowsAligned(in[1], g.kBase, g.kRow, g.kStride, g.batchRank) &&
                 rowsAligned(in[2], g.vBase, g.vRow, g.vStride, g.batchRank) &&
                 rowsAligned(out[0], 0, g.yRow, g.yStride, g.batchRank);
  switch (padded) {
    case 32:
      return launchFlash<T, 32, W, kResident>(g, m, ctx);
    case 64:
      return launchFlash<T, 64, W, kResident>(g, m, ctx);
    case 96:
      return launchFlash<T, 96, W, kResident>(g, m, ctx);
    default:
      return launchFlash<T, 128, W, kResident>(g, m, ctx);
  }
}

template <int W, bool kResident = false>
std::unique_ptr<Kernel> createFlash(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, "flash_mma", g, whyNot)) return nullptr;
  if (kResident && g.sk > kResidentBlocks * kBlockKeys) {
    if (whyNot)
      *whyNot = "flash_mma_8w_resident: up to " + std::to_string(kResidentBlocks * kBlockKeys) +
                " keys (all of K and V in shared memory), got Sk = " + std::to_string(g.sk);
    return nullptr;
  }
  const DataType type = c.inputs[0].type;
  if (type != DataType::kHALF && type != DataType::kBF16) {
    if (whyNot) *whyNot = std::string("flash_mma: fp16 and bf16 only, got ") + dataTypeName(type);
    return nullptr;
  }
  const int padded = paddedHeadSize(g);
  if (padded == 0) {
    if (whyNot)
      *whyNot = "flash_mma: head sizes up to 128, got D = " + std::to_string(g.d) +
                ", Dv = " + std::to_string(g.dv);
    return nullptr;
  }
  if (!fitsInt(g)) {
    if (whyNot)
      *whyNot =
          "flash_mma: a batch index's matrices span more than 2^31 elements (its indices are "
          "32-bit)";
    return nullptr;
  }
  using Types =
      ElementTypes<Stored<DataType::kHALF, __half>, Stored<DataType::kBF16, __nv_bfloat16>>;
  return makeTypedKernel<Types>(
      type, [g, padded](auto tag, const void* const* in, void* const* out, const RunContext& ctx) {
        if (ctx.emulate)
          return unsupported("attention flash_mma: a tensor-core kernel, no host emulation");
        if (g.count == 0 || g.sq == 0) return Status::ok();
        return runFlash<decltype(tag), W, kResident>(g, padded, in, out, ctx);
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

// The pointer-array batch's operands: per batch index, where its K, Q, score, V and output
// matrices start (cublasGemmBatchedEx reads them from device memory).
struct BatchPointers {
  const void** k;
  const void** q;
  void** scores;
  const void** v;
  void** y;
};

template <class T>
__global__ void fillBatchPointers(BatchPointers p, const T* q, const T* k, const T* v, T* scores,
                                  T* y, Geometry g) {
  for (int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < g.count;
       n += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const at::Offsets o = at::offsetsOf(g, n);
    p.k[n] = k + o.k;
    p.q[n] = q + o.q;
    p.scores[n] = scores + n * g.sq * g.sk;
    p.v[n] = v + o.v;
    p.y[n] = y + o.y;
  }
}

// Strides between consecutive batch indices, for cuBLAS's strided batch.
struct BatchStrides {
  int64_t q = 0, k = 0, v = 0, y = 0;
};

class UnfusedCublas final : public Kernel {
 public:
  // `strided`: every operand's batch indices one stride apart (`strides`), so cuBLAS's strided
  // batch reads them; otherwise (head views whose batch and heads strides differ) a kernel writes
  // each batch index's matrix addresses into the workspace and the pointer-array batch reads them.
  UnfusedCublas(const Geometry& g, DataType type, bool strided, BatchStrides strides)
      : g_(g), type_(type), strided_(strided), strides_(strides) {}

  size_t workspaceSize() const override {
    return pointersAt() + (strided_ ? 0 : 5 * static_cast<size_t>(g_.count) * sizeof(void*));
  }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (g_.count == 0 || g_.sq == 0) return Status::ok();
    cublasHandle_t h = nullptr;
    KILN_RETURN_IF_ERROR(cublasHandleFor(ctx, h));
    const auto stream = static_cast<cudaStream_t>(ctx.stream);
    BatchPointers ptrs{};
    if (!strided_) {
      auto** base = reinterpret_cast<void**>(static_cast<char*>(workspace) + pointersAt());
      const size_t c = static_cast<size_t>(g_.count);
      ptrs = {const_cast<const void**>(base), const_cast<const void**>(base + c), base + 2 * c,
              const_cast<const void**>(base + 3 * c), base + 4 * c};
      const unsigned blocks =
          static_cast<unsigned>(std::min<int64_t>((g_.count + 255) / 256, 4096));
      if (type_ == DataType::kFLOAT)
        fillBatchPointers<float><<<blocks, 256, 0, stream>>>(
            ptrs, static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
            static_cast<const float*>(in[2]), static_cast<float*>(workspace),
            static_cast<float*>(out[0]), g_);
      else
        fillBatchPointers<__half><<<blocks, 256, 0, stream>>>(
            ptrs, static_cast<const __half*>(in[0]), static_cast<const __half*>(in[1]),
            static_cast<const __half*>(in[2]), static_cast<__half*>(workspace),
            static_cast<__half*>(out[0]), g_);
      KILN_CHECK_LAUNCH("attention_batch_pointers");
    }
    const cudaDataType_t t = cublasDataType(type_);
    const float zero = 0.f, one = 1.f;
    const int sq = static_cast<int>(g_.sq), sk = static_cast<int>(g_.sk);
    const int d = static_cast<int>(g_.d), dv = static_cast<int>(g_.dv);
    const int count = static_cast<int>(g_.count);
    const int ldk = static_cast<int>(g_.keyTransposed ? g_.sk : g_.kRow);
    const int ldq = static_cast<int>(g_.qRow), ldv = static_cast<int>(g_.vRow);
    const int ldy = static_cast<int>(g_.yRow);
    // Row-major matrices are column-major transposes: S^T [sk, sq] = op(K) Q^T.
    const cublasOperation_t opK = g_.keyTransposed ? CUBLAS_OP_N : CUBLAS_OP_T;
    if (strided_)
      KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          h, opK, CUBLAS_OP_N, sk, sq, d, &g_.scale,
          static_cast<const char*>(in[1]) + bytes(g_.kBase), t, ldk, strides_.k,
          static_cast<const char*>(in[0]) + bytes(g_.qBase), t, ldq, strides_.q, &zero, workspace,
          t, sk, g_.sq * g_.sk, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    else
      KILN_CUBLAS_CHECK(cublasGemmBatchedEx(h, opK, CUBLAS_OP_N, sk, sq, d, &g_.scale, ptrs.k, t,
                                            ldk, ptrs.q, t, ldq, &zero, ptrs.scores, t, sk, count,
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
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
    if (strided_)
      KILN_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
          h, CUBLAS_OP_N, CUBLAS_OP_N, dv, sq, sk, &one,
          static_cast<const char*>(in[2]) + bytes(g_.vBase), t, ldv, strides_.v, workspace, t, sk,
          g_.sq * g_.sk, &zero, out[0], t, ldy, strides_.y, count, CUBLAS_COMPUTE_32F,
          CUBLAS_GEMM_DEFAULT));
    else
      KILN_CUBLAS_CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, dv, sq, sk, &one, ptrs.v,
                                            t, ldv, ptrs.scores, t, sk, &zero, ptrs.y, t, ldy,
                                            count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

 private:
  size_t elementSize() const { return type_ == DataType::kFLOAT ? 4 : 2; }
  size_t bytes(int64_t elements) const { return static_cast<size_t>(elements) * elementSize(); }
  // The pointer arrays follow the scores, 256-byte aligned.
  size_t pointersAt() const { return (bytes(g_.count * g_.sq * g_.sk) + 255) / 256 * 256; }

  Geometry g_;
  DataType type_;
  bool strided_;
  BatchStrides strides_;
};

// The one stride between consecutive batch indices of an operand whose per-axis strides are
// `strides` (0: one matrix shared by all), or false when there is none: it broadcasts over some
// batch dims only, or (head views) its batch and heads strides are not one run.
bool uniformStride(const Geometry& g, const int64_t* strides, int64_t* stride) {
  bool first = true;
  int64_t unit = 0, expect = 0;
  for (int32_t i = g.batchRank - 1; i >= 0; --i) {
    if (g.batch[i] == 1) continue;
    if (first) {
      unit = strides[i];
      expect = unit * g.batch[i];
      first = false;
    } else if (strides[i] != expect) {
      return false;
    } else {
      expect *= g.batch[i];
    }
  }
  *stride = unit;
  return true;
}

std::unique_ptr<Kernel> createUnfused(const KernelConfig& c, std::string* whyNot) {
  Geometry g;
  if (!readGeometry(c, "unfused_cublas", g, whyNot)) return nullptr;
  const DataType type = c.inputs[0].type;
  if (!cublasSupportsType(type, whyNot)) return nullptr;
  for (int64_t v : {g.sq, g.sk, g.d, g.dv, g.count, g.sq * g.sk, g.qRow, g.kRow, g.vRow, g.yRow}) {
    if (!fitsInt32(v)) {
      if (whyNot)
        *whyNot = "unfused_cublas: a dimension, a row stride or the batch exceeds 32-bit int";
      return nullptr;
    }
  }
  BatchStrides st;
  const bool strided = uniformStride(g, g.qStride, &st.q) && uniformStride(g, g.kStride, &st.k) &&
                       uniformStride(g, g.vStride, &st.v) && uniformStride(g, g.yStride, &st.y);
  // Broadcasting (a stride of 0 on some batch axes) is read through the pointer array as well.
  return std::make_unique<UnfusedCublas>(g, type, strided, st);
}

// flash_mma's history on the H200, for whoever changes it next:
// - Skipping tiles past Sq and Sk with runtime branches inside the unrolled loops timed slower
//   (2026-12-03: ViT-B/16's 12 attention layers at batch 64, 2.20 ms against 1.84 ms). The
//   kernel now skips them with warp-uniform branches outside the loops (idle warps, the
//   compile-time tail steps of attendKeyBlock) and 32-bit indices throughout: under Nsight
//   Compute the kernel before that issued 4,700 instructions per warp at ViT's 64x12x197, 5% of
//   them mma, at 0.45 instructions per cycle per scheduler with 12 warps per SM; after it, 2,000
//   (the layer 0.147 -> 0.065 ms there; flash_mma_8w 0.063 ms, SDPA 0.091 in the same run).
// - Two query tiles per warp (head sizes up to 64) timed slower than one wherever both applied
//   (2026-12-03, FP16, D = 64: 0.190 against 0.180 ms at ViT-B/16's 64x12x197, 0.168 against
//   0.130 ms at 4x12x1024; it spilled at D = 64), so the kernel has one.
constexpr Tactic kTactics[] = {{"flash_mma", &createFlash<4>},
                               {"flash_mma_8w", &createFlash<8>},
                               {"flash_mma_8w_resident", &createFlash<8, true>},
                               {"cudnn_sdpa", &createCudnnSdpa},
                               {"unfused_cublas", &createUnfused},
                               {"reference", &createReference}};

}  // namespace

std::unique_ptr<Kernel> createUnalignedFallback(const KernelConfig& c, std::string* whyNot) {
  if (auto flash = createFlash<8>(c, nullptr)) return flash;
  return createUnfused(c, whyNot);
}
}  // namespace kiln::cuda::attention

std::span<const kiln::Tactic> kiln::ops::Attention::cudaTactics() {
  return cuda::attention::kTactics;
}
