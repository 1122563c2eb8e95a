// The "cudnn_graph" tactic of convolution: cuDNN's graph (backend) API, the one NVIDIA keeps (the
// legacy cudnnConvolutionForward of cudnn_convolution.cpp is deprecated, and in cuDNN 9 it builds
// and looks up a graph on every call, which is host time on every enqueue). See
// cudnn_convolution.h.
//
// Decisions:
// - Everything is made at create(): the tensor, convolution and operation descriptors, the
//   operation graph, the heuristic's engine configurations (mode A) and one finalized execution
//   plan: of the configurations in the heuristic's order that finalize, whose numerics kiln
//   allows and whose workspace fits kMaxWorkspace, the one of the tactic's rank (0: the first).
//   Ranks 0-3 are four tactics, all timed by the builder. run() only fills a variant pack with this
//   call's pointers and executes the plan; the plan is read-only, so several contexts run it at
//   once, each with its own cuDNN handle (a plan may run on any handle of its device).
// - Numerics: FP32 never on tensor cores (that would be TF32) nor with down-converted inputs;
//   FP16 on tensor cores with FP32 accumulation (no reduced-precision reduction); never a
//   nondeterministic engine.
// - Channels-last only (x, y and the weights NHWC, as the builder's format choice gives a CNN in
//   FP16): every tensor is then one the builder placed (the arena's are 64-byte aligned, each
//   weight an allocation of its own), so the plan is made for 16-byte aligned buffers, and run()
//   refuses, with the reason, a buffer that is not (only a caller of the kernel API can hand one
//   over). Linear NCHW convolutions keep the legacy tactic.
// - Asymmetric pads are the convolution's pre and post paddings, which the graph API takes as
//   they are (the legacy descriptor cannot).
// - The bias, residual and activation: kiln's epilogue kernel after the plan, as for "cudnn"; or,
//   in the "cudnn_graph_fused" tactics, pointwise operations of the same operation graph after the
//   convolution (cuDNN's runtime fusion: one kernel, compiled by cuDNN when the plan is made), in
//   FP32 on virtual FP32 intermediates and rounded once, as kiln's epilogue does. The activations
//   that have a cuDNN pointwise mode of the same function take part (ReLU, leaky ReLU and clip as
//   its clipped ReLU, sigmoid, tanh, both GELUs); others decline, and the unfused tactics remain.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/cudnn_graph_ops.h"
#include "backends/cuda/device.h"
#include "backends/cuda/library_handles.h"

namespace kiln::cuda {
namespace {

using cudnn_graph::Descriptor;
using cudnn_graph::set;

// The tensors' unique ids: the variant pack's (X, W, Y, bias, residual), then the fused graph's
// virtual intermediates.
enum Uid : int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kResidual = 5, kConvOut = 6, kVirtual = 7 };

// A tensor [n, c, h, w] stored channels-last (strides of NHWC).
Status makeNhwc(Descriptor& t, cudnnDataType_t type, int64_t uid, int64_t n, int64_t c, int64_t h,
                int64_t w, bool isVirtual = false) {
  return cudnn_graph::makeTensor(t, type, uid, {n, c, h, w}, {h * w * c, 1, w * c, c}, isVirtual);
}

class GraphConvolution final : public Kernel {
 public:
  // `fused`: the bias, residual and activation in the operation graph (hasEpilogue(g) holds).
  GraphConvolution(const ConvGeometry& g, int rank, bool fused)
      : g_(g), rank_(rank), fused_(fused) {}

  // Descriptors, graph and plan; unsupported() says why not.
  Status init() {
    return withCudnnQueryHandle([&](void* hv) -> Status {
      cudnnHandle_t h = static_cast<cudnnHandle_t>(hv);
      const cudnnDataType_t t = g_.type == DataType::kFLOAT ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
      Descriptor x, w, y, conv, op;
      KILN_RETURN_IF_ERROR(makeNhwc(x, t, kX, g_.n, g_.c, g_.h, g_.w));
      KILN_RETURN_IF_ERROR(makeNhwc(w, t, kW, g_.k, g_.cg, g_.kh, g_.kw));
      KILN_RETURN_IF_ERROR(makeNhwc(y, t, kY, g_.n, g_.k, g_.oh, g_.ow));
      // Fused: the convolution writes a virtual FP32 tensor, and the epilogue's pointwise
      // operations chain from it to y.
      Descriptor convOut;
      cudnn_graph::Epilogue epilogue(g_.hasBias, g_.residual >= 0, g_.hasActivation, g_.activation,
                                     g_.activationAlpha, g_.activationBeta);
      if (fused_)
        KILN_RETURN_IF_ERROR(
            makeNhwc(convOut, CUDNN_DATA_FLOAT, kConvOut, g_.n, g_.k, g_.oh, g_.ow, true));

      KILN_RETURN_IF_ERROR(conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
      const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
      const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
      const int64_t spatial = 2, dilations[2] = {g_.dh, g_.dw}, strides[2] = {g_.sh, g_.sw},
                    pre[2] = {g_.padTop, g_.padLeft}, post[2] = {g_.padBottom, g_.padRight};
      cudnnBackendDescriptor_t c = conv.get();
      KILN_RETURN_IF_ERROR(
          set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute));
      KILN_RETURN_IF_ERROR(
          set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode));
      KILN_RETURN_IF_ERROR(set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial));
      KILN_RETURN_IF_ERROR(
          set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dilations, 2));
      KILN_RETURN_IF_ERROR(
          set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, strides, 2));
      KILN_RETURN_IF_ERROR(set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pre, 2));
      KILN_RETURN_IF_ERROR(set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, post, 2));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(c));

      KILN_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR));
      const float alpha = 1.f, beta = 0.f;
      cudnnBackendDescriptor_t o = op.get();
      const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
      KILN_RETURN_IF_ERROR(set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, desc, x.address()));
      KILN_RETURN_IF_ERROR(set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, desc, w.address()));
      KILN_RETURN_IF_ERROR(set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, desc,
                               fused_ ? convOut.address() : y.address()));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, desc, conv.address()));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(o));

      std::vector<cudnnBackendDescriptor_t> ops = {op.get()};
      if (fused_) {
        const int64_t yStrides[4] = {g_.oh * g_.ow * g_.k, 1, g_.ow * g_.k, g_.k};
        KILN_RETURN_IF_ERROR(cudnn_graph::appendEpilogue(
            epilogue, t, convOut, y, {g_.n, g_.k, g_.oh, g_.ow},
            {yStrides[0], yStrides[1], yStrides[2], yStrides[3]}, {1, g_.k, 1, 1},
            {g_.k, 1, g_.k, g_.k}, kBias, kResidual, kVirtual, ops));
      }
      return cudnn_graph::makePlan(h, ops, g_.type, rank_, plan_, workspace_);
    });
  }

  size_t workspaceSize() const override { return workspace_; }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("cuDNN needs a GPU");
    int64_t uids[5] = {kX, kW, kY};
    void* pointers[5] = {const_cast<void*>(in[0]), const_cast<void*>(in[1]), out[0]};
    int64_t count = 3;
    if (fused_ && g_.hasBias) {
      uids[count] = kBias;
      pointers[count++] = const_cast<void*>(in[2]);
    }
    if (fused_ && g_.residual >= 0) {
      uids[count] = kResidual;
      pointers[count++] = const_cast<void*>(in[g_.residual]);
    }
    void* hv = nullptr;
    KILN_RETURN_IF_ERROR(ctx.libraries->cudnn(ctx.stream, hv));
    KILN_RETURN_IF_ERROR(cudnn_graph::execute(static_cast<cudnnHandle_t>(hv), plan_, uids, pointers,
                                              count, workspace, "cudnn_graph"));
    if (!fused_ && hasEpilogue(g_)) KILN_RETURN_IF_ERROR(applyConvEpilogue(out[0], in, g_, ctx));
    return Status::ok();
  }

 private:
  ConvGeometry g_;
  int rank_;
  bool fused_;
  Descriptor plan_;
  size_t workspace_ = 0;
};

}  // namespace

std::unique_ptr<Kernel> createCudnnGraphConvolution(const KernelConfig& c, std::string* whyNot) {
  return createCudnnGraphConvolutionRank(c, 0, "cudnn_graph", whyNot);
}

std::unique_ptr<Kernel> createCudnnGraphConvolutionRank(const KernelConfig& c, int rank,
                                                        const char* kTactic, std::string* whyNot,
                                                        bool fused) {
  ConvGeometry g;
  if (!readConvGeometry<ConvolutionParams>(c, kTactic, &g, whyNot, true)) return nullptr;
  auto decline = [&](const std::string& why) {
    if (whyNot) *whyNot = std::string(kTactic) + ": " + why;
    return nullptr;
  };
  if (g.type != DataType::kFLOAT && g.type != DataType::kHALF)
    return decline(std::string("fp32 and fp16 only, got ") + dataTypeName(g.type));
  if (!g.channelsLast || !g.weightsChannelsLast)
    return decline("needs x, y and the weights channels-last (linear NCHW takes \"cudnn\")");
  if (fused && g.hasActivation &&
      !cudnn_graph::hasPointwiseActivation(g.activation, g.activationAlpha, g.activationBeta))
    return decline("cuDNN has no pointwise mode for activation " +
                   std::to_string(static_cast<int32_t>(g.activation)));
  if (fused && !hasEpilogue(g))
    return decline("no bias, residual or activation to fuse (\"cudnn_graph\" takes it)");
  if (fused && g.type != DataType::kHALF)
    return decline("fp16 only (cuDNN's fused FP32 engines are TF32)");
  if (fused && !cudnn_graph::runtimeFusionEnabled())
    return decline("turned off by KILN_CUDNN_FUSION=0");
  if (deviceCount() == 0) return decline("no CUDA GPU to make a plan on: " + noDeviceReason());
  auto kernel = std::make_unique<GraphConvolution>(g, rank, fused);
  const Status s = kernel->init();
  if (!s) return decline(s.message());
  return kernel;
}

}  // namespace kiln::cuda
