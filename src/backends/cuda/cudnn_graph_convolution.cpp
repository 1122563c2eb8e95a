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
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_convolution.h"
#include "backends/cuda/device.h"
#include "backends/cuda/library_handles.h"
#include "backends/cuda/non_copyable.h"

namespace kiln::cuda {
namespace {

constexpr int64_t kAlignment = 16;
constexpr int64_t kMaxWorkspace = int64_t{512} << 20;
// How many of the heuristic's configurations to try before giving up.
constexpr int64_t kMaxConfigs = 16;
// The tensors' unique ids: the variant pack's (X, W, Y, bias, residual), then the fused graph's
// virtual intermediates.
enum Uid : int64_t {
  kX = 1,
  kW = 2,
  kY = 3,
  kBias = 4,
  kResidual = 5,
  kConvOut = 6,
  kBiased = 7,
  kSummed = 8
};

// One backend descriptor, destroyed with its owner.
class Descriptor : NonCopyable {
 public:
  ~Descriptor() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Status create(cudnnBackendDescriptorType_t type) {
    KILN_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
    return Status::ok();
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* address() { return &d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

template <class T>
Status set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, const T* values, int64_t count = 1) {
  KILN_CUDNN_CHECK(cudnnBackendSetAttribute(d, name, type, count, values));
  return Status::ok();
}

// A tensor [n, c, h, w] stored channels-last (strides of NHWC), with its unique id; a virtual one
// lives only inside the fused kernel.
Status makeTensor(Descriptor& t, cudnnDataType_t type, int64_t uid, int64_t n, int64_t c, int64_t h,
                  int64_t w, bool isVirtual = false) {
  KILN_RETURN_IF_ERROR(t.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR));
  const int64_t dims[4] = {n, c, h, w};
  const int64_t strides[4] = {h * w * c, 1, w * c, c};
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims, 4));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4));
  KILN_RETURN_IF_ERROR(set(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid));
  KILN_RETURN_IF_ERROR(
      set(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &kAlignment));
  if (isVirtual)
    KILN_RETURN_IF_ERROR(
        set(t.get(), CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(t.get()));
  return Status::ok();
}

// The cuDNN pointwise mode computing the convolution's fused activation, with its clip values for
// the ReLU modes; false when cuDNN has none of the same function.
struct PointwiseActivation {
  cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD;
  bool relu = false;  // the clip attributes below apply
  float lowerClip = 0.f, upperClip = 0.f, lowerSlope = 0.f;
  bool hasUpperClip = false;
};

bool pointwiseActivation(const ConvGeometry& g, PointwiseActivation& a) {
  switch (g.activation) {
    case ActivationType::kRELU:
      a.relu = true;
      return true;
    case ActivationType::kLEAKY_RELU:  // below the lower clip 0: 0 + slope * (x - 0)
      a.relu = true;
      a.lowerSlope = g.activationAlpha;
      return true;
    case ActivationType::kCLIP:  // min(max(x, alpha), beta): slope 0 below, capped above
      if (!(g.activationAlpha <= g.activationBeta)) return false;
      a.relu = true;
      a.lowerClip = g.activationAlpha;
      a.upperClip = g.activationBeta;
      a.hasUpperClip = true;
      return true;
    case ActivationType::kSIGMOID:
      a.mode = CUDNN_POINTWISE_SIGMOID_FWD;
      return true;
    case ActivationType::kTANH:
      a.mode = CUDNN_POINTWISE_TANH_FWD;
      return true;
    case ActivationType::kGELU:
      a.mode = CUDNN_POINTWISE_GELU_FWD;
      return true;
    case ActivationType::kGELU_TANH:
      a.mode = CUDNN_POINTWISE_GELU_APPROX_TANH_FWD;
      return true;
    default:
      return false;
  }
}

// A pointwise operation y = mode(x) or y = mode(x, b), computed in FP32.
Status makePointwise(Descriptor& op, Descriptor& pw, cudnnPointwiseMode_t mode,
                     const PointwiseActivation* clips, Descriptor& x, Descriptor* b,
                     Descriptor& y) {
  KILN_RETURN_IF_ERROR(pw.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  KILN_RETURN_IF_ERROR(set(pw.get(), CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode));
  KILN_RETURN_IF_ERROR(
      set(pw.get(), CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision));
  if (clips && clips->relu) {
    KILN_RETURN_IF_ERROR(
        set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_FLOAT, &clips->lowerClip));
    KILN_RETURN_IF_ERROR(set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_FLOAT,
                             &clips->lowerSlope));
    if (clips->hasUpperClip)
      KILN_RETURN_IF_ERROR(
          set(pw.get(), CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, &clips->upperClip));
  }
  KILN_CUDNN_CHECK(cudnnBackendFinalize(pw.get()));
  const cudnnBackendAttributeType_t desc = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  KILN_RETURN_IF_ERROR(op.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR));
  KILN_RETURN_IF_ERROR(
      set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc, pw.address()));
  KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_XDESC, desc, x.address()));
  if (b)
    KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_BDESC, desc, b->address()));
  KILN_RETURN_IF_ERROR(set(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_YDESC, desc, y.address()));
  KILN_CUDNN_CHECK(cudnnBackendFinalize(op.get()));
  return Status::ok();
}

// Why the engine of configuration `cfg` is not allowed for `type`, or "" when it is.
std::string numericsRefusal(cudnnBackendDescriptor_t cfg, DataType type) {
  Descriptor engine;
  if (!engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR)) return "cannot describe its engine";
  int64_t count = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                               &count, engine.address()) != CUDNN_STATUS_SUCCESS)
    return "cannot read its engine";
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t nbNotes = 0;
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                               CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &nbNotes,
                               notes) != CUDNN_STATUS_SUCCESS)
    return "cannot read its numerical notes";
  for (int64_t i = 0; i < nbNotes; ++i) {
    switch (notes[i]) {
      case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        return "nondeterministic";
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
        return "reduced-precision accumulation";
      case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        if (type == DataType::kFLOAT) return "TF32 or down-converted FP32";
        break;
      default:
        break;
    }
  }
  return "";
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
      Descriptor x, w, y, conv, op, graph, heur;
      KILN_RETURN_IF_ERROR(makeTensor(x, t, kX, g_.n, g_.c, g_.h, g_.w));
      KILN_RETURN_IF_ERROR(makeTensor(w, t, kW, g_.k, g_.cg, g_.kh, g_.kw));
      KILN_RETURN_IF_ERROR(makeTensor(y, t, kY, g_.n, g_.k, g_.oh, g_.ow));
      // Fused: the convolution writes a virtual FP32 tensor, and the epilogue's operations chain
      // from it to y: [+ bias] [+ residual] [activation], each step's output virtual but the last.
      Descriptor convOut, bias, residual, biased, summed;
      Descriptor pwOps[3], pwModes[3];
      std::vector<cudnnBackendDescriptor_t> ops;
      Descriptor* convY = &y;
      if (fused_) {
        const bool act = g_.hasActivation, res = g_.residual >= 0;
        PointwiseActivation a;
        if (act && !pointwiseActivation(g_, a))
          return unsupported("cuDNN has no pointwise mode for this activation");
        KILN_RETURN_IF_ERROR(
            makeTensor(convOut, CUDNN_DATA_FLOAT, kConvOut, g_.n, g_.k, g_.oh, g_.ow, true));
        convY = &convOut;
        Descriptor* current = &convOut;
        int n = 0;
        // The output of the next step: y when nothing follows it, else a virtual tensor.
        auto next = [&](Descriptor& virt, int64_t uid, bool last) -> Status {
          if (last) return Status::ok();
          return makeTensor(virt, CUDNN_DATA_FLOAT, uid, g_.n, g_.k, g_.oh, g_.ow, true);
        };
        if (g_.hasBias) {
          KILN_RETURN_IF_ERROR(makeTensor(bias, t, kBias, 1, g_.k, 1, 1));
          const bool last = !res && !act;
          KILN_RETURN_IF_ERROR(next(biased, kBiased, last));
          Descriptor& out = last ? y : biased;
          KILN_RETURN_IF_ERROR(makePointwise(pwOps[n], pwModes[n], CUDNN_POINTWISE_ADD, nullptr,
                                             *current, &bias, out));
          ++n;
          current = &out;
        }
        if (res) {
          KILN_RETURN_IF_ERROR(makeTensor(residual, t, kResidual, g_.n, g_.k, g_.oh, g_.ow));
          KILN_RETURN_IF_ERROR(next(summed, kSummed, !act));
          Descriptor& out = act ? summed : y;
          KILN_RETURN_IF_ERROR(makePointwise(pwOps[n], pwModes[n], CUDNN_POINTWISE_ADD, nullptr,
                                             *current, &residual, out));
          ++n;
          current = &out;
        }
        if (act) {
          KILN_RETURN_IF_ERROR(
              makePointwise(pwOps[n], pwModes[n], a.mode, &a, *current, nullptr, y));
          ++n;
        }
        for (int i = 0; i < n; ++i) ops.push_back(pwOps[i].get());
      }

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
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, desc, convY->address()));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, desc, conv.address()));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha));
      KILN_RETURN_IF_ERROR(
          set(o, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(o));

      KILN_RETURN_IF_ERROR(graph.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
      ops.insert(ops.begin(), op.get());
      KILN_RETURN_IF_ERROR(set(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS, desc, ops.data(),
                               static_cast<int64_t>(ops.size())));
      KILN_RETURN_IF_ERROR(
          set(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(graph.get()));

      KILN_RETURN_IF_ERROR(heur.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
      const cudnnBackendHeurMode_t heurMode = CUDNN_HEUR_MODE_A;
      KILN_RETURN_IF_ERROR(
          set(heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, desc, graph.address()));
      KILN_RETURN_IF_ERROR(
          set(heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heurMode));
      KILN_CUDNN_CHECK(cudnnBackendFinalize(heur.get()));
      int64_t available = 0;
      KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, desc, 0,
                                                &available, nullptr));
      const int64_t wanted = std::min(available, kMaxConfigs);
      std::vector<Descriptor> configs(static_cast<size_t>(wanted));
      std::vector<cudnnBackendDescriptor_t> raw;
      for (Descriptor& d : configs) {
        KILN_RETURN_IF_ERROR(d.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
        raw.push_back(d.get());
      }
      int64_t returned = 0;
      if (wanted > 0)
        KILN_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, desc,
                                                  wanted, &returned, raw.data()));
      std::string tried;
      int usable = 0;
      for (int64_t i = 0; i < returned; ++i) {
        const std::string refusal = numericsRefusal(raw[size_t(i)], g_.type);
        if (!refusal.empty()) {
          tried += " engine config " + std::to_string(i) + ": " + refusal + ";";
          continue;
        }
        Descriptor candidate;
        KILN_RETURN_IF_ERROR(candidate.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
        KILN_RETURN_IF_ERROR(
            set(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h));
        KILN_RETURN_IF_ERROR(
            set(candidate.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, desc, &raw[size_t(i)]));
        if (cudnnBackendFinalize(candidate.get()) != CUDNN_STATUS_SUCCESS) {
          tried += " engine config " + std::to_string(i) + ": does not finalize;";
          continue;
        }
        int64_t bytes = 0, n = 0;
        KILN_CUDNN_CHECK(cudnnBackendGetAttribute(candidate.get(),
                                                  CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &n, &bytes));
        if (bytes > kMaxWorkspace) {
          tried += " engine config " + std::to_string(i) + ": needs " + std::to_string(bytes) +
                   " bytes of workspace;";
          continue;
        }
        if (usable++ < rank_) continue;  // a lower rank's tactic takes that one
        workspace_ = static_cast<size_t>(bytes);
        std::swap(*plan_.address(), *candidate.address());
        return Status::ok();
      }
      if (usable > 0)
        return unsupported("cuDNN's heuristic offers " + std::to_string(usable) +
                           " usable engine(s), this tactic takes the one of rank " +
                           std::to_string(rank_));
      return unsupported("cuDNN's heuristic offers no usable engine among " +
                         std::to_string(returned) + (tried.empty() ? "" : ":" + tried));
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
    for (int64_t i = 0; i < count; ++i)
      if (reinterpret_cast<uintptr_t>(pointers[i]) % kAlignment != 0)
        return invalidArgument(
            "cudnn_graph: a tensor is not 16-byte aligned, as its execution plan needs");
    void* hv = nullptr;
    KILN_RETURN_IF_ERROR(ctx.libraries->cudnn(ctx.stream, hv));
    // The variant pack holds this call's pointers: made per call (a few host-side writes), since
    // one kernel may run from several contexts at once.
    Descriptor pack;
    KILN_RETURN_IF_ERROR(pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR));
    KILN_RETURN_IF_ERROR(
        set(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, count));
    KILN_RETURN_IF_ERROR(set(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                             pointers, count));
    KILN_RETURN_IF_ERROR(
        set(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace));
    KILN_CUDNN_CHECK(cudnnBackendFinalize(pack.get()));
    KILN_CUDNN_CHECK(cudnnBackendExecute(static_cast<cudnnHandle_t>(hv), plan_.get(), pack.get()));
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
  if (fused && !hasEpilogue(g))
    return decline("no bias, residual or activation to fuse (\"cudnn_graph\" takes it)");
  if (fused && g.type != DataType::kHALF)
    return decline("fp16 only (cuDNN's fused FP32 engines are TF32)");
  if (deviceCount() == 0) return decline("no CUDA GPU to make a plan on: " + noDeviceReason());
  auto kernel = std::make_unique<GraphConvolution>(g, rank, fused);
  const Status s = kernel->init();
  if (!s) return decline(s.message());
  return kernel;
}

}  // namespace kiln::cuda
