// Convolution's CUDA tactics, fastest first, kiln's reference last:
//   cublaslt_1x1  a 1x1, stride-1, unpadded, ungrouped convolution over channels-last tensors is
//                 the matrix product Y [N*H*W, K] = X [N*H*W, C] W^T (W [K, C]): Linear's cuBLASLt
//                 kernel, with the bias, residual and activation in its epilogue (a ResNet's
//                 bottleneck convolutions, most of its time, are these).
//   patch_gemm    a convolution whose stride is its kernel, unpadded (a vision transformer's patch
//                 embedding: 16x16 at stride 16 over 3 channels, where cuDNN is slow), over
//                 channels-last tensors and weights: the patches gathered into the workspace
//                 (patch_gather.cu), then the same cuBLASLt product as cublaslt_1x1.
//   im2col_gemm   any other ungrouped convolution over few input channels (a CNN's stem: 7x7 at
//                 stride 2 over 3 channels, where cuDNN's implicit GEMM has too short a reduction
//                 per tap to fill the tensor cores, and its fastest legacy algorithm asked for
//                 122 MiB of workspace at ResNet-50 batch 64): the patch matrix built in chunks
//                 of at most kIm2colChunkBytes, each chunk gathered, then multiplied into its
//                 rows of Y by the cuBLASLt product, so the workspace stays small and the chunk
//                 is still in L2 when the product reads it.
//   depthwise_vectorized  a 3x3 depthwise convolution over channels-last tensors whose channels
//                 are a multiple of the 16-byte vector (MobileNet's blocks): kiln's own per-element
//                 kernel, 16-byte loads of each tap's channels and of their filters
//                 (convolution_cuda.cu).
//   cudnn_graph   cuDNN's graph API, one execution plan made at creation
//                 (backends/cuda/cudnn_graph_convolution.cpp), then kiln's epilogue kernel;
//                 channels-last only. The heuristic's first usable engine; cudnn_graph_1..3 its
//                 next three, so that timing, not the heuristic, picks among them.
//   cudnn_graph_fused  the same with the bias, residual and activation as pointwise operations
//                 of its operation graph (cuDNN's runtime fusion: one kernel, no epilogue pass);
//                 FP16, activations cuDNN has. cudnn_graph_fused_1 its heuristic's next engine.
//   cudnn         the legacy cudnnConvolutionForward (backends/cuda/cudnn_convolution.cpp), then
//                 kiln's epilogue kernel: the heuristic's first usable algorithm, cudnn_1 and
//                 cudnn_2 its next two (the fastest may ask for far more workspace than they do);
//                 cudnn_batch2 and cudnn_batch4 the first one on halves or quarters of the batch
//                 in turn, with a slice's workspace, where the whole batch's is 16 MiB or more.
//   reference     kiln's own per-element kernel (convolution_cuda.cu).
// All validate through readConvGeometry (conv_geometry.h), as deconvolution's do. Plain C++ (no
// CUDA header).
#include "ops/convolution/convolution_cuda.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/device.h"
#include "ops/linear/linear_cuda.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

// The convolution as Linear's product Y [rows, K] = X' [rows, k] W^T, W stored [K, k] (so
// transposed), with the convolution's bias, residual and activation as its epilogue.
LinearGeometry productOf(const ConvGeometry& g, int64_t rows, int64_t k) {
  LinearGeometry lg;
  lg.type = g.type;
  lg.p.transposeW = true;
  lg.p.hasBias = g.hasBias;
  lg.p.hasResidual = g.residual >= 0;
  lg.p.hasActivation = g.hasActivation;
  lg.p.activation = g.activation;
  lg.p.activationAlpha = g.activationAlpha;
  lg.p.activationBeta = g.activationBeta;
  lg.rows = rows;
  lg.k = k;
  lg.n = g.k;
  return lg;
}

std::unique_ptr<Kernel> createCublasLt1x1(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "cublaslt_1x1";
  ConvGeometry g;
  // W [K, C, 1, 1] has the same bytes in both formats.
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  auto decline = [&](const char* why) {
    if (whyNot) *whyNot = std::string(kTactic) + ": " + why;
    return nullptr;
  };
  if (!g.channelsLast)
    return decline("needs channels-last tensors (over linear NCHW it is no single product)");
  if (g.kh != 1 || g.kw != 1 || g.sh != 1 || g.sw != 1 || g.padTop != 0 || g.padLeft != 0 ||
      g.padBottom != 0 || g.padRight != 0)
    return decline("needs a 1x1 kernel, stride 1 and no padding");
  if (g.groups != 1) return decline("needs groups = 1");
  // W [K, C] is [N, K] of the product.
  return createLinearCublasLt(productOf(g, g.n * g.h * g.w, g.c), kTactic, whyNot);
}

// patch_gemm: the patches gathered into the workspace, then Linear's cuBLASLt product over them.
class PatchGemm final : public Kernel {
 public:
  PatchGemm(const ConvGeometry& g, std::unique_ptr<Kernel> product)
      : g_(g), product_(std::move(product)) {
    const size_t element = dataTypeSize(g.type);
    patchBytes_ =
        (static_cast<size_t>(g.n * g.oh * g.ow * g.kh * g.kw * g.c) * element + 255) / 256 * 256;
  }
  size_t workspaceSize() const override { return patchBytes_ + product_->workspaceSize(); }
  bool usesLibraries() const override { return true; }
  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    KILN_RETURN_IF_ERROR(launchPatchGather(g_.type, in[0], workspace, g_, ctx));
    // The product reads P where the convolution read X; W, bias and residual are the same slots.
    const void* slots[4] = {workspace, in[1], nullptr, nullptr};
    const int64_t rest = 1 + (g_.hasBias ? 1 : 0) + (g_.residual >= 0 ? 1 : 0);
    for (int64_t i = 2; i <= rest; ++i) slots[i] = in[i];
    return product_->run(slots, out, static_cast<char*>(workspace) + patchBytes_, ctx);
  }

 private:
  ConvGeometry g_;
  std::unique_ptr<Kernel> product_;
  size_t patchBytes_ = 0;
};

std::unique_ptr<Kernel> createPatchGemm(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "patch_gemm";
  ConvGeometry g;
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  auto decline = [&](const char* why) {
    if (whyNot) *whyNot = std::string(kTactic) + ": " + why;
    return nullptr;
  };
  if (!g.channelsLast || !g.weightsChannelsLast)
    return decline("needs channels-last tensors and weights (a patch is then rows of X)");
  if (g.sh != g.kh || g.sw != g.kw || g.kh * g.kw == 1 || g.dh != 1 || g.dw != 1 || g.padTop != 0 ||
      g.padLeft != 0 || g.padBottom != 0 || g.padRight != 0)
    return decline(
        "needs a stride equal to its kernel (larger than 1x1), no padding and no dilation");
  if (g.groups != 1) return decline("needs groups = 1");
  // W [K, KH, KW, C] is [N, K] of the product.
  std::unique_ptr<Kernel> product =
      createLinearCublasLt(productOf(g, g.n * g.oh * g.ow, g.kh * g.kw * g.c), kTactic, whyNot);
  if (!product) return nullptr;
  return std::make_unique<PatchGemm>(g, std::move(product));
}

// im2col_gemm: the patch matrix in row chunks of at most this many bytes, each gathered and then
// multiplied. 16 MiB keeps a chunk in the H200's 60 MiB L2 between its gather and its product,
// and the whole workspace well below the activations of the networks that have such a stem.
constexpr size_t kIm2colChunkBytes = size_t{16} << 20;
// Below this many input channels cuDNN's implicit GEMM wastes most of each tensor-core tile; over
// more, im2col's KH KW copies of the input cost more than they save (and timing it would only
// lengthen builds).
constexpr int64_t kIm2colMaxChannels = 16;

class Im2colGemm final : public Kernel {
 public:
  Im2colGemm(const ConvGeometry& g, int64_t columns, int64_t chunkRows,
             std::unique_ptr<Kernel> chunk, std::unique_ptr<Kernel> tail, DeviceBuffer weights)
      : g_(g),
        columns_(columns),
        chunkRows_(chunkRows),
        chunk_(std::move(chunk)),
        tail_(std::move(tail)),
        weights_(std::move(weights)) {
    patchBytes_ = (static_cast<size_t>(chunkRows * columns) * element() + 255) / 256 * 256;
  }
  size_t workspaceSize() const override {
    return patchBytes_ +
           std::max(chunk_->workspaceSize(), tail_ ? tail_->workspaceSize() : size_t{0});
  }
  bool usesLibraries() const override { return true; }
  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    const int64_t rows = g_.n * g_.oh * g_.ow;
    for (int64_t begin = 0; begin < rows; begin += chunkRows_) {
      const int64_t count = std::min(chunkRows_, rows - begin);
      KILN_RETURN_IF_ERROR(
          launchIm2colGather(g_.type, in[0], workspace, g_, columns_, begin, count, ctx));
      // These rows of Y (and of the residual) are the product of these rows of P.
      const size_t offset = static_cast<size_t>(begin * g_.k) * element();
      const void* slots[4] = {workspace, weights_.data() ? weights_.data() : in[1], nullptr,
                              nullptr};
      if (g_.hasBias) slots[2] = in[2];  // Linear's slots are convolution's
      if (g_.residual >= 0) slots[g_.residual] = static_cast<const char*>(in[g_.residual]) + offset;
      void* y[1] = {static_cast<char*>(out[0]) + offset};
      const Kernel& product = count == chunkRows_ ? *chunk_ : *tail_;
      KILN_RETURN_IF_ERROR(product.run(slots, y, static_cast<char*>(workspace) + patchBytes_, ctx));
    }
    return Status::ok();
  }

 private:
  size_t element() const { return dataTypeSize(g_.type); }

  ConvGeometry g_;
  int64_t columns_ = 0, chunkRows_ = 0;
  std::unique_ptr<Kernel> chunk_, tail_;  // the product of a whole chunk, and of the last rows
  DeviceBuffer weights_;  // W [K, columns] zero-padded, where KH KW C is not a multiple of 8
  size_t patchBytes_ = 0;
};

std::unique_ptr<Kernel> createIm2colGemm(const KernelConfig& c, std::string* whyNot) {
  constexpr const char* kTactic = "im2col_gemm";
  ConvGeometry g;
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  auto decline = [&](const std::string& why) {
    if (whyNot) *whyNot = std::string(kTactic) + ": " + why;
    return nullptr;
  };
  if (!g.channelsLast || !g.weightsChannelsLast)
    return decline("needs channels-last tensors and weights (a patch row is then runs of X)");
  if (g.groups != 1) return decline("needs groups = 1");
  if (g.kh * g.kw == 1) return decline("a 1x1 kernel is cublaslt_1x1's");
  if (g.c >= kIm2colMaxChannels)
    return decline("for fewer than " + std::to_string(kIm2colMaxChannels) +
                   " input channels (over more, cuDNN's implicit GEMM fills the tensor cores)");
  const int64_t taps = g.kh * g.kw * g.c;
  const int64_t columns = (taps + 7) / 8 * 8;
  const int64_t rows = g.n * g.oh * g.ow;
  if (rows >= (int64_t{1} << 31) || columns >= (int64_t{1} << 31) ||
      g.n * g.h * g.w >= (int64_t{1} << 31))
    return decline("indexes rows and columns in 32 bits; this convolution has more");
  const size_t element = dataTypeSize(g.type);
  const int64_t fit =
      static_cast<int64_t>(kIm2colChunkBytes / (static_cast<size_t>(columns) * element));
  // Whole tiles of rows per chunk where there is room, so only the last chunk is ragged.
  const int64_t chunkRows =
      std::min(rows, fit >= 256 ? fit / 128 * 128 : std::max<int64_t>(fit, 1));
  DeviceBuffer weights;
  if (columns != taps) {
    // W [K, KH, KW, C] padded to [K, columns] once, here: the product's rows must be 16-byte.
    const void* w = c.constantInputs.size() > 1 ? c.constantInputs[1] : nullptr;
    if (!w)
      return decline("needs constant weights where KH KW C (" + std::to_string(taps) +
                     ") is not a multiple of 8: they are padded once, at creation");
    std::vector<uint8_t> padded(static_cast<size_t>(g.k * columns) * element, 0);
    for (int64_t k = 0; k < g.k; ++k)
      std::memcpy(padded.data() + static_cast<size_t>(k * columns) * element,
                  static_cast<const uint8_t*>(w) + static_cast<size_t>(k * taps) * element,
                  static_cast<size_t>(taps) * element);
    Status s = weights.allocate(padded.size(), "im2col_gemm's padded weights");
    if (s.isOk()) s = copyToDevice(weights.data(), padded.data(), padded.size());
    if (!s.isOk()) return decline(s.message());
  }
  std::unique_ptr<Kernel> chunk =
      createLinearCublasLt(productOf(g, chunkRows, columns), kTactic, whyNot);
  if (!chunk) return nullptr;
  std::unique_ptr<Kernel> tail;
  if (rows % chunkRows != 0) {
    tail = createLinearCublasLt(productOf(g, rows % chunkRows, columns), kTactic, whyNot);
    if (!tail) return nullptr;
  }
  return std::make_unique<Im2colGemm>(g, columns, chunkRows, std::move(chunk), std::move(tail),
                                      std::move(weights));
}

template <int Rank>
std::unique_ptr<Kernel> createCudnnGraphRank(const KernelConfig& c, std::string* whyNot) {
  static constexpr const char* kNames[] = {"cudnn_graph", "cudnn_graph_1", "cudnn_graph_2",
                                           "cudnn_graph_3"};
  return createCudnnGraphConvolutionRank(c, Rank, kNames[Rank], whyNot);
}

template <int Rank>
std::unique_ptr<Kernel> createCudnnGraphFusedRank(const KernelConfig& c, std::string* whyNot) {
  static constexpr const char* kNames[] = {"cudnn_graph_fused", "cudnn_graph_fused_1"};
  return createCudnnGraphConvolutionRank(c, Rank, kNames[Rank], whyNot, true);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {
    // cuBLASLt adds the residual as C with beta 1: C == D is its in-place form.
    {"cublaslt_1x1", &createCublasLt1x1, true},
    {"patch_gemm", &createPatchGemm, true},
    {"im2col_gemm", &createIm2colGemm, true},
    // Reads each residual element only for the output element it adds to.
    {"depthwise_vectorized", &createDepthwiseVectorized, true},
    {"cudnn_graph", &createCudnnGraphConvolution},
    {"cudnn_graph_1", &createCudnnGraphRank<1>},
    {"cudnn_graph_2", &createCudnnGraphRank<2>},
    {"cudnn_graph_3", &createCudnnGraphRank<3>},
    // After the unfused ones although often faster: making one compiles its kernel (cuDNN's
    // runtime fusion), so the builder's format probe, which stops at the first tactic that
    // accepts, should meet a precompiled engine first. The timing takes whichever is faster.
    {"cudnn_graph_fused", &createCudnnGraphFusedRank<0>},
    {"cudnn_graph_fused_1", &createCudnnGraphFusedRank<1>},
    {"cudnn", &createCudnnTactic<ConvolutionParams>},
    {"cudnn_1", &createCudnnTactic<ConvolutionParams, 1>},
    {"cudnn_2", &createCudnnTactic<ConvolutionParams, 2>},
    {"cudnn_batch2", &createCudnnTactic<ConvolutionParams, 0, 2>},
    {"cudnn_batch4", &createCudnnTactic<ConvolutionParams, 0, 4>},
    {"reference", &createConvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Convolution::cudaTactics() { return cuda::kTactics; }
