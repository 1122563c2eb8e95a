// Deconvolution's CUDA tactics, fastest first, kiln's reference last: cuDNN
// (cudnnConvolutionBackwardData of the convolution it transposes,
// backends/cuda/cudnn_convolution.cpp) and kiln's own per-element kernel (deconvolution_cuda.cu).
// Plain C++ (no CUDA header).
#include <string>

#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/float_layer_checks.h"
#include "ops/deconvolution/deconvolution_cuda.h"
#include "ops/op.h"

namespace kiln::cuda {

bool readDeconvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                       std::string* whyNot) {
  const auto* p = validateFloatLayer<DeconvolutionParams>(c, LayerType::kDECONVOLUTION,
                                                          "deconvolution", tactic, true, whyNot);
  if (!p) return false;
  fillConvGeometry(c, *p, g);
  g->outPadH = p->outputPaddingH;
  g->outPadW = p->outputPaddingW;
  return true;
}

namespace {

std::unique_ptr<Kernel> createCudnn(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  if (!readDeconvolution(c, "cudnn", &g, whyNot)) return nullptr;
  return createCudnnConvolution(g, true, whyNot);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cudnn", &createCudnn},
                               {"reference", &createDeconvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Deconvolution::cudaTactics() { return cuda::kTactics; }
