// Convolution's CUDA tactics, fastest first, kiln's reference last:
//   cublaslt_1x1  a 1x1, stride-1, unpadded, ungrouped convolution over channels-last tensors is
//                 the matrix product Y [N*H*W, K] = X [N*H*W, C] W^T (W [K, C]): Linear's cuBLASLt
//                 kernel, with the bias, residual and activation in its epilogue (a ResNet's
//                 bottleneck convolutions, most of its time, are these).
//   patch_gemm    a convolution whose stride is its kernel, unpadded (a vision transformer's patch
//                 embedding: 16x16 at stride 16 over 3 channels, where cuDNN is slow), over
//                 channels-last tensors and weights: the patches gathered into the workspace
//                 (patch_gather.cu), then the same cuBLASLt product as cublaslt_1x1.
//   cudnn_graph   cuDNN's graph API, one execution plan made at creation
//                 (backends/cuda/cudnn_graph_convolution.cpp), then kiln's epilogue kernel;
//                 channels-last only. The heuristic's first usable engine; cudnn_graph_1..3 its
//                 next three, so that timing, not the heuristic, picks among them.
//   cudnn         the legacy cudnnConvolutionForward (backends/cuda/cudnn_convolution.cpp), then
//                 kiln's epilogue kernel.
//   reference     kiln's own per-element kernel (convolution_cuda.cu).
// All validate through readConvGeometry (conv_geometry.h), as deconvolution's do. Plain C++ (no
// CUDA header).
#include "ops/convolution/convolution_cuda.h"

#include <memory>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/cudnn_convolution.h"
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
    const size_t element = g.type == DataType::kFLOAT ? 4 : 2;
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

template <int Rank>
std::unique_ptr<Kernel> createCudnnGraphRank(const KernelConfig& c, std::string* whyNot) {
  static constexpr const char* kNames[] = {"cudnn_graph", "cudnn_graph_1", "cudnn_graph_2",
                                           "cudnn_graph_3"};
  return createCudnnGraphConvolutionRank(c, Rank, kNames[Rank], whyNot);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {
    // cuBLASLt adds the residual as C with beta 1: C == D is its in-place form.
    {"cublaslt_1x1", &createCublasLt1x1, true},       {"patch_gemm", &createPatchGemm, true},
    {"cudnn_graph", &createCudnnGraphConvolution},    {"cudnn_graph_1", &createCudnnGraphRank<1>},
    {"cudnn_graph_2", &createCudnnGraphRank<2>},      {"cudnn_graph_3", &createCudnnGraphRank<3>},
    {"cudnn", &createCudnnTactic<ConvolutionParams>}, {"reference", &createConvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Convolution::cudaTactics() { return cuda::kTactics; }
