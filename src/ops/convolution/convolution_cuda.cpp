// Convolution's CUDA tactics, fastest first, kiln's reference last: cuDNN
// (cudnnConvolutionForward, backends/cuda/cudnn_convolution.cpp) and kiln's own per-element
// kernel (convolution_cuda.cu). Both validate through readConvGeometry (conv_geometry.h), as
// deconvolution's do. Plain C++ (no CUDA header).
#include "ops/convolution/convolution_cuda.h"
#include "backends/cuda/cudnn_convolution.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cudnn", &createCudnnTactic<ConvolutionParams>},
                               {"reference", &createConvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Convolution::cudaTactics() { return cuda::kTactics; }
