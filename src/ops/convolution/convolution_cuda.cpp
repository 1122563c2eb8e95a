// Convolution's CUDA tactics, fastest first, kiln's reference last:
//   cublaslt_1x1  a 1x1, stride-1, unpadded, ungrouped convolution over channels-last tensors is
//                 the matrix product Y [N*H*W, K] = X [N*H*W, C] W^T (W [K, C]): Linear's cuBLASLt
//                 kernel, with the bias, residual and activation in its epilogue (a ResNet's
//                 bottleneck convolutions, most of its time, are these).
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
#include "backends/cuda/cudnn_convolution.h"
#include "ops/linear/linear_cuda.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

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
  LinearGeometry lg;
  lg.type = g.type;
  lg.p.transposeW = true;  // W [K, C] is [N, K] of the product
  lg.p.hasBias = g.hasBias;
  lg.p.hasResidual = g.residual >= 0;
  lg.p.hasActivation = g.hasActivation;
  lg.p.activation = g.activation;
  lg.p.activationAlpha = g.activationAlpha;
  lg.p.activationBeta = g.activationBeta;
  lg.rows = g.n * g.h * g.w;
  lg.k = g.c;
  lg.n = g.k;
  return createLinearCublasLt(lg, kTactic, whyNot);
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
    {"cublaslt_1x1", &createCublasLt1x1, true},  {"cudnn_graph", &createCudnnGraphConvolution},
    {"cudnn_graph_1", &createCudnnGraphRank<1>}, {"cudnn_graph_2", &createCudnnGraphRank<2>},
    {"cudnn_graph_3", &createCudnnGraphRank<3>}, {"cudnn", &createCudnnTactic<ConvolutionParams>},
    {"reference", &createConvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Convolution::cudaTactics() { return cuda::kTactics; }
