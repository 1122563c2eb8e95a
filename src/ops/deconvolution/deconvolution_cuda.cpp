// Deconvolution's CUDA tactics, fastest first, kiln's reference last: cuDNN
// (cudnnConvolutionBackwardData of the convolution it transposes,
// backends/cuda/cudnn_convolution.cpp) and kiln's own per-element kernel (deconvolution_cuda.cu).
// Both validate through readConvGeometry (conv_geometry.h), as convolution's do. Plain C++ (no
// CUDA header).
#include "ops/deconvolution/deconvolution_cuda.h"
#include "backends/cuda/cudnn_convolution.h"
#include "ops/op.h"

namespace kiln::cuda {
namespace {

// Fastest first, kiln's reference last; plans and timing caches record these names.
constexpr Tactic kTactics[] = {{"cudnn", &createCudnnTactic<DeconvolutionParams>},
                               {"reference", &createDeconvolutionReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Deconvolution::cudaTactics() { return cuda::kTactics; }
