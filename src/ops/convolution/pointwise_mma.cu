// pointwise_mma: a 1x1 convolution (stride 1, unpadded, ungrouped) over channels-last FP16/BF16
// tensors with few channels on one side, as MobileNet's blocks have them (16 -> 96 channels
// expanded, 144 -> 24 projected): the matrix product Y [pixels, K] = X [pixels, C] W^T on tensor
// cores (mma.sync m16n8k16, FP32 accumulation), with the bias, residual and activation applied
// to the accumulators before the one store of Y.
//
// Why kiln has its own: such layers move many more bytes than they compute, and the libraries ran
// them at a quarter of the card's bandwidth or less (MobileNetV2 b64 on an H100: its 16 -> 96
// expansion at 112x112 took 0.21 ms through cuDNN's graph API where its 180 MB need 0.054 ms);
// with ReLU6 (a Clip, which cuBLASLt's epilogues lack) kiln's activation pass then read and wrote
// the whole output once more. Here each block copies its 64 pixels' rows into shared memory with
// 16-byte cp.async copies (one contiguous run of memory: channels-last pixels are consecutive),
// each warp multiplies 16 of them by the block's 64 output channels (or fewer), W's pairs read
// straight from global memory (a few KiB, L1-resident), and stages its sums in shared memory so
// that the epilogue reads the residual and writes the outputs as whole 16-byte vectors, rows of up
// to 128 contiguous bytes. (The first form stored the accumulators' 4-byte pairs directly: 8 rows
// of 16 bytes per store instruction, half a 32-byte sector each, and ran MobileNetV2's 16 -> 96
// expansion in 0.321 ms on an H100 against cuDNN's 0.211.)
//
// Device code only (no host emulation): the device harness holds it to the CPU reference.
// KILN_POINTWISE_MMA=0 in the environment turns it off, to tell a wrong result of its from others'.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/mma_sync.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "backends/cuda/vector_access.cuh"
#include "ops/convolution/convolution_cuda.h"
#include "ops/convolution/convolution_semantics.h"

namespace kiln::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kTilePixels = 16 * kWarps;  // a block's pixels: the mma's 16 rows per warp
constexpr int kPassTiles = 8;             // 8-channel output tiles accumulated per pass (64)
// Elements after each staged row, so that ldmatrix's 8 rows of 16 bytes fall in distinct banks.
constexpr int kRowPad = 8;
// A warp's staged sums: 16 rows of a pass's 64 columns, FP32, rows padded to 72 floats so that
// the accumulators' 8-byte pairs of 8 rows fall in distinct banks within each half-warp.
constexpr int kSumRow = 8 * kPassTiles + 8;
constexpr int kSumFloatsPerWarp = 16 * kSumRow;
// Input channels the staged tile holds: 64 rows of 200 elements (25 KiB) and the sums' 18 KiB stay
// under the 48 KiB of shared memory a block may have without opting in.
constexpr int64_t kMaxInputChannels = 192;
// Offered only where the layer is memory-bound: C K / (C + K), the products per element moved,
// at most this (MobileNetV2's largest, 64 -> 384, is 55; ResNet-50's 1x1 layers are 51 to 410,
// and cuBLASLt's kernels are the better ones where the products dominate).
constexpr int64_t kMaxProductsPerElement = 64;

struct PointwiseSizes {
  int32_t pixels, c, k;
  int32_t cPadded;  // C rounded up to the mma's reduction step of 16
  int32_t row;      // a staged row's stride in elements: cPadded + kRowPad
};

template <class T>
struct PointwiseArgs {
  const T* x;
  const T* w;  // [K, C]: the same bytes in either weight format
  const T* bias;
  const T* residual;  // of y's shape and format, or nullptr; may be y itself
  T* y;
  PointwiseSizes z;
  ConvGeometry g;  // the activation fields (epilogue)
};

// The grid: every (pixel tile, pass of 64 output channels).
inline int64_t tilesTimesPasses(const PointwiseSizes& z) {
  return (int64_t{z.pixels} + kTilePixels - 1) / kTilePixels *
         ((int64_t{z.k} + 8 * kPassTiles - 1) / (8 * kPassTiles));
}

template <class T>
__device__ inline uint32_t loadPair(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

template <class T>
__global__ void __launch_bounds__(kWarps * 32) pointwiseMmaKernel(PointwiseArgs<T> a) {
  extern __shared__ __align__(16) unsigned char staged[];
  T* tile = reinterpret_cast<T*>(staged);
  const PointwiseSizes& z = a.z;
  // Block b is pass b % passes (output channels [64 pass, 64 pass + 64) or fewer) of pixel tile
  // b / passes: a layer over few pixels with many outputs still fills the card, and a tile's
  // passes run side by side, so that its rows come from L2 after the first.
  const int passes = (z.k + 8 * kPassTiles - 1) / (8 * kPassTiles);
  const int first = static_cast<int>(blockIdx.x) / passes * kTilePixels;
  const int n0 = static_cast<int>(blockIdx.x) % passes * 8 * kPassTiles;

  // The block's pixel rows into shared memory; zeros past C (up to cPadded) and past the last
  // pixel, so the products there add nothing.
  const int vectors = z.cPadded / 8;
  for (int i = threadIdx.x; i < kTilePixels * vectors; i += blockDim.x) {
    const int r = i / vectors, v = i % vectors;
    const int p = first + r;
    const bool inside = p < z.pixels && v * 8 < z.c;
    copy16Async(tile + r * z.row + v * 8,
                inside ? a.x + static_cast<int64_t>(p) * z.c + v * 8 : a.x, inside);
  }
  commitAsync();
  waitAsync<0>();
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int quad = lane / 4, pairColumn = 2 * (lane % 4);
  // ldmatrix's four 8x8 matrices of the warp's 16 rows: (rows 0-7, 8-15) x (k 0-7, 8-15), in the
  // order of the A operand's registers; lane l gives row l % 8 of matrix l / 8.
  const T* aRow = tile + (warp * 16 + (lane / 8) % 2 * 8 + lane % 8) * z.row + lane / 16 * 8;
  float* sums =
      reinterpret_cast<float*>(staged + kTilePixels * z.row * sizeof(T)) + warp * kSumFloatsPerWarp;
  {
    float acc[kPassTiles][4];
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[j][e] = 0.f;
    for (int k0 = 0; k0 < z.cPadded; k0 += 16) {
      uint32_t af[4];
      loadMatrices(af, aRow + k0);
      // B's registers: W[n][k0 + pairColumn (+ 8)] and the next element; zero past C.
      const bool lowInside = k0 + pairColumn < z.c, highInside = k0 + 8 + pairColumn < z.c;
#pragma unroll
      for (int j = 0; j < kPassTiles; ++j) {
        if (n0 + 8 * j < z.k) {  // the same for the whole warp
          const T* wRow = a.w + (n0 + 8 * j + quad) * z.c + k0 + pairColumn;
          const uint32_t b0 = lowInside ? loadPair(wRow) : 0u;
          const uint32_t b1 = highInside ? loadPair(wRow + 8) : 0u;
          mma16816<T>(acc[j], af, b0, b1);
        }
      }
    }
    // The accumulators plus the bias into the warp's staging rows: registers 0-1 are row quad,
    // 2-3 row quad + 8, columns 8 j + pairColumn and the next.
#pragma unroll
    for (int j = 0; j < kPassTiles; ++j) {
      if (n0 + 8 * j >= z.k) continue;
      const int col = 8 * j + pairColumn;
      const float bias0 = a.bias ? toFloat(a.bias[n0 + col]) : 0.f;
      const float bias1 = a.bias ? toFloat(a.bias[n0 + col + 1]) : 0.f;
      *reinterpret_cast<float2*>(sums + quad * kSumRow + col) =
          make_float2(acc[j][0] + bias0, acc[j][1] + bias1);
      *reinterpret_cast<float2*>(sums + (quad + 8) * kSumRow + col) =
          make_float2(acc[j][2] + bias0, acc[j][3] + bias1);
    }
    __syncwarp();
    // The epilogue, one 16-byte vector of 8 channels per lane and step: a row's pass columns are
    // contiguous in Y, and a step covers 4 such rows.
    const int passVectors = min(kPassTiles, (z.k - n0) / 8);
    for (int i = lane; i < 16 * passVectors; i += 32) {
      const int r = i / passVectors, v = i % passVectors;
      const int p = first + warp * 16 + r;
      if (p >= z.pixels) continue;
      const int64_t o = static_cast<int64_t>(p) * z.k + n0 + 8 * v;
      const float* sum = sums + r * kSumRow + 8 * v;
      Vec<T, 8> residual{};
      if (a.residual) residual = loadVec<8>(a.residual + o);
      Vec<T, 8> out;
#pragma unroll
      for (int e = 0; e < 8; ++e)
        out.v[e] = fromFloat<T>(
            ops::convolution::epilogue(a.g, sum[e], a.residual ? toFloat(residual.v[e]) : 0.f));
      storeVec<8>(a.y + o, out);
    }
  }
}

using MmaTypes =
    ElementTypes<Stored<DataType::kHALF, __half>, Stored<DataType::kBF16, __nv_bfloat16>>;

class PointwiseMma final : public Kernel {
 public:
  PointwiseMma(const ConvGeometry& g, const PointwiseSizes& z, KernelPtr reference)
      : g_(g), z_(z), reference_(std::move(reference)) {}

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("pointwise_mma: a tensor-core kernel, no host emulation");
    const void* residual = g_.residual >= 0 ? in[g_.residual] : nullptr;
    // X, the residual and Y move as 16-byte vectors, W in pairs: a binding off those grids takes
    // the reference.
    if (!isAligned(in[0]) || !isAligned(in[1], 4) || !isAligned(out[0]) ||
        (residual && !isAligned(residual)))
      return reference_->run(in, out, workspace, ctx);
    if (z_.pixels == 0) return Status::ok();
    return launchTyped<MmaTypes>(g_.type, [&](auto tag) {
      using T = decltype(tag);
      PointwiseArgs<T> a{static_cast<const T*>(in[0]),
                         static_cast<const T*>(in[1]),
                         g_.hasBias ? static_cast<const T*>(in[2]) : nullptr,
                         static_cast<const T*>(residual),
                         static_cast<T*>(out[0]),
                         z_,
                         g_};
      const unsigned blocks = static_cast<unsigned>(tilesTimesPasses(z_));
      const size_t shared = static_cast<size_t>(kTilePixels) * z_.row * sizeof(T) +
                            size_t{kWarps} * kSumFloatsPerWarp * sizeof(float);
      pointwiseMmaKernel<T>
          <<<blocks, kWarps * 32, shared, static_cast<cudaStream_t>(ctx.stream)>>>(a);
      KILN_CHECK_LAUNCH("dense_conv_pointwise_mma");
      return Status::ok();
    });
  }

 private:
  ConvGeometry g_;
  PointwiseSizes z_;
  KernelPtr reference_;  // for bindings off the vector grid
};

}  // namespace

std::unique_ptr<Kernel> createPointwiseMma(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "pointwise_mma";
  ConvGeometry g;
  // W [K, C, 1, 1] has the same bytes in both formats.
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  auto decline = [&](const std::string& why) -> std::unique_ptr<Kernel> {
    if (whyNot) *whyNot = std::string(kTactic) + ": " + why;
    return nullptr;
  };
  const char* off = std::getenv("KILN_POINTWISE_MMA");
  if (off && std::strcmp(off, "0") == 0) return decline("turned off by KILN_POINTWISE_MMA=0");
  if (g.type != DataType::kHALF && g.type != DataType::kBF16)
    return decline("needs FP16 or BF16 (a tensor-core product)");
  if (!g.channelsLast) return decline("needs channels-last tensors");
  if (g.kh != 1 || g.kw != 1 || g.sh != 1 || g.sw != 1 || g.padTop != 0 || g.padLeft != 0 ||
      g.padBottom != 0 || g.padRight != 0 || g.groups != 1)
    return decline("needs a 1x1 kernel, stride 1, no padding and groups = 1");
  if (g.c % 8 != 0 || g.k % 8 != 0)
    return decline("needs input and output channels that are multiples of 8, got " +
                   std::to_string(g.c) + " and " + std::to_string(g.k));
  if (g.c > kMaxInputChannels)
    return decline("stages at most " + std::to_string(kMaxInputChannels) + " input channels, got " +
                   std::to_string(g.c));
  if (g.c * g.k > kMaxProductsPerElement * (g.c + g.k))
    return decline("offered only where the layer is memory-bound (C K / (C + K) at most " +
                   std::to_string(kMaxProductsPerElement) + "; " + std::to_string(g.c) + " -> " +
                   std::to_string(g.k) + " channels is compute-bound, cuBLASLt's ground)");
  const int64_t pixels = g.n * g.h * g.w;
  if (pixels > INT32_MAX - kTilePixels || g.k > INT32_MAX / 8 ||
      (pixels + kTilePixels - 1) / kTilePixels * ((g.k + 63) / 64) > INT32_MAX)
    return decline("needs fewer than 2^31 pixels and blocks (its indices are 32-bit)");
  KernelPtr reference = createConvolutionReference(c, whyNot);
  if (!reference) return nullptr;
  PointwiseSizes z;
  z.pixels = static_cast<int32_t>(pixels);
  z.c = static_cast<int32_t>(g.c);
  z.k = static_cast<int32_t>(g.k);
  z.cPadded = static_cast<int32_t>((g.c + 15) / 16 * 16);
  z.row = z.cPadded + kRowPad;
  return std::make_unique<PointwiseMma>(g, z, std::move(reference));
}

}  // namespace kiln::cuda
