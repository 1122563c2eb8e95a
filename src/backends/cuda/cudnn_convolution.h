// cuDNN as a tactic of kiln's convolution (cudnnConvolutionForward) and deconvolution
// (cudnnConvolutionBackwardData of the convolution that deconvolution transposes): one kernel for
// both layers, since cuDNN describes both with the same descriptors (cudnn_convolution.cpp), and
// the two small kernels of kiln's own that run around the library call
// (cudnn_convolution_kernels.cu). Plain C++ (no CUDA header).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/conv_geometry.h"
#include "backends/cuda/kernel.h"

namespace kiln::cuda {

// The cuDNN kernel for `g` (from a validated configuration; `deconv`: g describes a
// deconvolution), or nullptr with *whyNot ("cudnn: ...") when cuDNN cannot run it: a type other
// than FP32 or FP16, no GPU to choose an algorithm on, a size beyond int, pads cuDNN cannot
// express, no algorithm within the workspace limit.
// `rank`: which usable algorithm of cuDNN's ranked list (0 its first; "cudnn_1", "cudnn_2" are
// ranks 1 and 2, timed beside it: the first may be fast and ask for a large workspace, the next a
// little slower with much less, which the builder's workspace choice can then take).
// `slices` > 1 (a convolution whose batch it divides): the algorithm chosen for N / slices images,
// run on each slice in turn, with one slice's workspace ("cudnn_batch2", "cudnn_batch4").
std::unique_ptr<Kernel> createCudnnConvolution(const ConvGeometry& g, bool deconv,
                                               std::string* whyNot, int rank = 0, int slices = 1);

// The "cudnn_graph" tactics of convolution: cuDNN's graph API, an execution plan made at creation
// (cudnn_graph_convolution.cpp); channels-last FP32/FP16 only. `rank` picks which usable engine
// configuration of the heuristic's list (in its order) the plan is made from: "cudnn_graph" is
// rank 0, "cudnn_graph_1".."cudnn_graph_3" the next ones, so that the builder times the best few
// engines instead of trusting the first. A plan records the tactic, so the same rank is made
// again at load (the heuristic's order is cuDNN's, fixed for a version and GPU).
std::unique_ptr<Kernel> createCudnnGraphConvolution(const KernelConfig& c, std::string* whyNot);
// `fused` ("cudnn_graph_fused", "cudnn_graph_fused_1"): the bias, residual and activation run in
// the same operation graph (cuDNN's runtime fusion) instead of kiln's epilogue kernel after it;
// FP16 only, and only a convolution with an epilogue whose activation cuDNN has.
std::unique_ptr<Kernel> createCudnnGraphConvolutionRank(const KernelConfig& c, int rank,
                                                        const char* tactic, std::string* whyNot,
                                                        bool fused = false);

// The process-wide cuDNN handle for queries at kernel creation (algorithms, engine heuristics,
// plans), created on first use; f(handle) runs under its mutex. unsupported() without a GPU.
Status withCudnnQueryHandle(const std::function<Status(void* handle)>& f);

// The "cudnn" tactic of convolution (P = ConvolutionParams) and deconvolution
// (DeconvolutionParams).
template <class P, int Rank = 0, int Slices = 1>
std::unique_ptr<Kernel> createCudnnTactic(const KernelConfig& c, std::string* whyNot) {
  ConvGeometry g;
  // Channels-last weights only with a channels-last x: cuDNN's filter takes x's format.
  const bool nhwc = c.inputs.size() > 1 && c.inputs[0].format == TensorFormat::kCHANNELS_LAST;
  if (!readConvGeometry<P>(c, "cudnn", &g, whyNot, nhwc)) return nullptr;
  return createCudnnConvolution(g, std::is_same_v<P, DeconvolutionParams>, whyNot, Rank, Slices);
}

// The kernels around the library call, enqueued on ctx.stream.
// Whether `g` has an epilogue to apply after the library's product: a bias, a residual or an
// activation.
bool hasEpilogue(const ConvGeometry& g);
// y [n, k, oh, ow] (in g's format) = epilogue(y + bias[channel], residual): in float, rounded once;
// the bias and residual are the layer's inputs `in` at g's slots.
Status applyConvEpilogue(void* y, const void* const* in, const ConvGeometry& g,
                         const RunContext& ctx);
// Filter [outer, inner, kh, kw] (linear) -> [outer, kh, kw, inner] (cuDNN's NHWC filter).
Status packFilterNhwc(void* dst, const void* src, DataType type, int64_t outer, int64_t inner,
                      int64_t kh, int64_t kw, const RunContext& ctx);

}  // namespace kiln::cuda
