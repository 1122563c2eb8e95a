// Convolution's CUDA tactics, fastest first, kiln's reference last: cuDNN
// (cudnnConvolutionForward, backends/cuda/cudnn_convolution.cpp) and kiln's own per-element
// kernel (convolution_cuda.cu). Plain C++ (no CUDA header).
#include <string>

#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/float_layer_checks.h"
#include "ops/convolution/convolution_cuda.h"
#include "ops/op.h"

namespace kiln::cuda {

bool readConvolution(const KernelConfig& c, const char* tactic, ConvGeometry* g,
                     std::string* whyNot) {
  const auto* p = validateFloatLayer<ConvolutionParams>(c, LayerType::kCONVOLUTION, "convolution",
                                                        tactic, true, whyNot);
  if (!p) return false;
  fillConvGeometry(c, *p, g);
  return true;
}

namespace {

std::unique_ptr<Kernel> createCudnn(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  if (!readConvolution(c, "cudnn", &g, whyNot)) return nullptr;
  return createCudnnConvolution(g, false, whyNot);
}

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cudnn", &createCudnn}, {"reference", &createConvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Convolution::cudaTactics() { return cuda::kTactics; }
