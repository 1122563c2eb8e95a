// cuDNN tactic of convolution (cudnnConvolutionForward) and deconvolution
// (cudnnConvolutionBackwardData of the convolution that deconvolution transposes); see
// cudnn_convolution.h. Each op's unit (src/ops/<op>/<op>_cuda.cpp) validates its configuration
// and hands the geometry here.
//
// Decisions:
// - Descriptors and the algorithm are fixed at create(), read-only afterwards, so one kernel runs
//   from several contexts at once; run() only enqueues (no allocation, no synchronisation).
// - The algorithm comes from cudnnGet*Algorithm_v7 (cuDNN's heuristics, no trial runs) on a
//   process-wide handle created lazily under a mutex, used only under that mutex: the first
//   candidate that cuDNN reports as supported, whose math is allowed (FP32: FMA only, never
//   TF32; FP16: tensor ops allowed, FP32 accumulation) and whose workspace is at most
//   kMaxWorkspace. The builder's timing then decides between this and kiln's reference.
// - cuDNN pads symmetrically: asymmetric pads are accepted only when cuDNN's output extent with
//   the leading pad equals kiln's (the extra trailing pad is zeros either way); otherwise the
//   tactic declines and the reference runs.
// - Channels-last: x/y are NHWC and the filter is given to cuDNN as NHWC too (the layout its
//   tensor-core NHWC kernels want). The builder hands constant weights over channels-last,
//   reformatted once at build time; weights that arrive linear (a computed filter, or a caller
//   of the kernel API) are packed into the workspace first by one small kernel.
// - Bias, residual and activation: kiln's own epilogue kernel after the convolution, one pass over
//   the output (both formats, all types).
// - Batch slices ("cudnn_batch2", "cudnn_batch4"): the convolution described for N / slices
//   images and run once per slice, the slices one after the other on the stream. cuDNN's fastest
//   algorithm for a CNN's stem asks for scratch in proportion to the batch (122.5 MiB at
//   ResNet-50's batch 64), more than any hole of the context's arena at that step; a slice's
//   scratch is that over the slices, for about the same time, so the builder's workspace choice
//   can take it (builder/workspace_choice.h).
#include "backends/cuda/cudnn_convolution.h"

#include <functional>
#include <mutex>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/float_layer_checks.h"
#include "backends/cuda/library_handles.h"

namespace kiln::cuda {
namespace {

constexpr size_t kMaxWorkspace = size_t{512} << 20;
// The whole batch's workspace from which batch slices are offered at all.
constexpr size_t kSlicesWorthBytes = size_t{16} << 20;

size_t align256(size_t v) { return (v + 255) / 256 * 256; }

struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

// The shared part of both tactics: descriptors for the convolution `conv` maps `in` [n, inC, ih,
// iw] to `out` [n, outC, oh2, ow2] with filter [outC, inC/groups, kh, kw]. For deconvolution
// `in` is kiln's output and `out` kiln's input (backward data runs the convolution backwards).
Status makeDescriptors(const ConvGeometry& g, bool deconv, Descriptors& d) {
  const cudnnDataType_t dt = g.type == DataType::kFLOAT ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  const cudnnTensorFormat_t fmt = g.channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const int n = static_cast<int>(g.n);
  KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.x));
  KILN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.y));
  KILN_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d.w));
  KILN_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d.conv));
  KILN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, fmt, dt, n, static_cast<int>(g.c),
                                              static_cast<int>(g.h), static_cast<int>(g.w)));
  KILN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, fmt, dt, n, static_cast<int>(g.k),
                                              static_cast<int>(g.oh), static_cast<int>(g.ow)));
  // Conv filter [k, cg, kh, kw]; deconv filter [c, kg, kh, kw] (the forward conv from y to x).
  const int outer = static_cast<int>(deconv ? g.c : g.k);
  const int inner = static_cast<int>(deconv ? g.kg : g.cg);
  KILN_CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, dt, fmt, outer, inner, static_cast<int>(g.kh),
                                              static_cast<int>(g.kw)));
  KILN_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      d.conv, static_cast<int>(g.padTop), static_cast<int>(g.padLeft), static_cast<int>(g.sh),
      static_cast<int>(g.sw), static_cast<int>(g.dh), static_cast<int>(g.dw),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  KILN_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv, static_cast<int>(g.groups)));
  KILN_CUDNN_CHECK(cudnnSetConvolutionMathType(
      d.conv, g.type == DataType::kFLOAT ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  // cuDNN's own output extent of the forward convolution must be kiln's (symmetric padding).
  int on = 0, oc = 0, oh = 0, ow = 0;
  KILN_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(d.conv, deconv ? d.y : d.x, d.w, &on, &oc, &oh, &ow));
  const int64_t wantC = deconv ? g.c : g.k, wantH = deconv ? g.h : g.oh,
                wantW = deconv ? g.w : g.ow;
  if (on != g.n || oc != wantC || oh != wantH || ow != wantW)
    return unsupported("cuDNN pads symmetrically; with pads (top " + std::to_string(g.padTop) +
                       ", left " + std::to_string(g.padLeft) + ") its extent is " +
                       std::to_string(oh) + "x" + std::to_string(ow) + ", kiln's is " +
                       std::to_string(wantH) + "x" + std::to_string(wantW));
  return Status::ok();
}

bool mathAllowed(DataType type, cudnnMathType_t m) {
  if (type != DataType::kFLOAT) return true;              // FP16: tensor ops with FP32 accumulation
  return m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH;  // the descriptor stays FMA
}

// The `rank`-th (0: the first) of cuDNN's ranked algorithms `perf` that succeeded, uses a math
// type allowed for `type` and needs at most kMaxWorkspace bytes (workspaceOf(algo, &bytes)), its
// bytes in *bytesOut; -1 when none, with the ones that need more listed in *tried.
template <class Perf, class WorkspaceOf>
int usableAt(int rank, const Perf* perf, int returned, DataType type, WorkspaceOf&& workspaceOf,
             size_t* bytesOut, std::string* tried) {
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || !mathAllowed(type, perf[i].mathType)) continue;
    size_t bytes = 0;
    if (workspaceOf(perf[i].algo, &bytes) != CUDNN_STATUS_SUCCESS) continue;
    if (bytes > kMaxWorkspace) {
      *tried +=
          " algo " + std::to_string(perf[i].algo) + " needs " + std::to_string(bytes) + " bytes;";
      continue;
    }
    if (rank-- > 0) continue;
    *bytesOut = bytes;
    return i;
  }
  return -1;
}

class ConvCudnn final : public Kernel {
 public:
  ConvCudnn(const ConvGeometry& g, bool deconv, int rank, int slices)
      : g_(g), deconv_(deconv), rank_(rank), slices_(slices) {}

  // Descriptors (of one batch slice), the algorithm and the workspace; unsupported() says why not.
  Status init() {
    ConvGeometry slice = g_;
    slice.n = g_.n / slices_;
    KILN_RETURN_IF_ERROR(makeDescriptors(slice, deconv_, d_));
    return withCudnnQueryHandle([&](void* hv) -> Status {
      cudnnHandle_t h = static_cast<cudnnHandle_t>(hv);
      std::string tried;
      if (!deconv_) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        KILN_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
            h, d_.x, d_.w, d_.conv, d_.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
        const int i = usableAt(
            rank_, perf, returned, g_.type,
            [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
              return cudnnGetConvolutionForwardWorkspaceSize(h, d_.x, d_.w, d_.conv, d_.y, algo,
                                                             bytes);
            },
            &cudnnBytes_, &tried);
        if (i >= 0) {
          fwdAlgo_ = perf[i].algo;
          return finish();
        }
      } else {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int returned = 0;
        // Backward data: dy is kiln's input x, dx kiln's output y.
        KILN_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
            h, d_.w, d_.x, d_.conv, d_.y, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf));
        const int i = usableAt(
            rank_, perf, returned, g_.type,
            [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
              return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d_.w, d_.x, d_.conv, d_.y,
                                                                  algo, bytes);
            },
            &cudnnBytes_, &tried);
        if (i >= 0) {
          bwdAlgo_ = perf[i].algo;
          return finish();
        }
      }
      if (rank_ > 0)
        return unsupported("cuDNN's heuristic offers fewer than " + std::to_string(rank_ + 1) +
                           " usable algorithms for this configuration");
      return unsupported("cuDNN offers no algorithm for this configuration" +
                         (tried.empty() ? std::string() : " within the workspace limit:" + tried));
    });
  }

  size_t workspaceSize() const override { return workspace_; }
  bool usesLibraries() const override { return true; }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (ctx.emulate) return unsupported("cuDNN needs a GPU");
    void* hv = nullptr;
    KILN_RETURN_IF_ERROR(ctx.libraries->cudnn(ctx.stream, hv));
    auto h = static_cast<cudnnHandle_t>(hv);
    const void* w = in[1];
    void* cudnnWork = workspace;
    if (g_.channelsLast && !g_.weightsChannelsLast) {
      // The filter as NHWC in the front of the workspace, cuDNN's scratch behind it.
      KILN_RETURN_IF_ERROR(packFilterNhwc(workspace, in[1], g_.type, deconv_ ? g_.c : g_.k,
                                          deconv_ ? g_.kg : g_.cg, g_.kh, g_.kw, ctx));
      w = workspace;
      cudnnWork = static_cast<char*>(workspace) + filterBytes_;
    }
    const float one = 1.f, zero = 0.f;
    if (!deconv_ && slices_ > 1) {
      // Each slice's epilogue right after its convolution, while that slice's y (a quarter of
      // the stem's 103 MB at ResNet-50 b64) may still be in L2.
      ConvGeometry slice = g_;
      slice.n = g_.n / slices_;
      // x, w, then the bias and residual at their slots (the epilogue reads only those two).
      const void* sliceIn[4] = {in[0], in[1], g_.hasBias ? in[2] : nullptr, nullptr};
      if (g_.residual >= 4) return invalidArgument("cudnn: a residual past input 3");
      for (int i = 0; i < slices_; ++i) {
        void* y = static_cast<char*>(out[0]) + i * ySliceBytes_;
        KILN_CUDNN_CHECK(cudnnConvolutionForward(
            h, &one, d_.x, static_cast<const char*>(in[0]) + i * xSliceBytes_, d_.w, w, d_.conv,
            fwdAlgo_, cudnnWork, cudnnBytes_, &zero, d_.y, y));
        if (!hasEpilogue(g_)) continue;
        if (g_.residual >= 0)
          sliceIn[g_.residual] = static_cast<const char*>(in[g_.residual]) + i * ySliceBytes_;
        KILN_RETURN_IF_ERROR(applyConvEpilogue(y, sliceIn, slice, ctx));
      }
      return Status::ok();
    }
    if (!deconv_) {
      KILN_CUDNN_CHECK(cudnnConvolutionForward(h, &one, d_.x, in[0], d_.w, w, d_.conv, fwdAlgo_,
                                               cudnnWork, cudnnBytes_, &zero, d_.y, out[0]));
    } else {
      KILN_CUDNN_CHECK(cudnnConvolutionBackwardData(h, &one, d_.w, w, d_.x, in[0], d_.conv,
                                                    bwdAlgo_, cudnnWork, cudnnBytes_, &zero, d_.y,
                                                    out[0]));
    }
    if (hasEpilogue(g_)) KILN_RETURN_IF_ERROR(applyConvEpilogue(out[0], in, g_, ctx));
    return Status::ok();
  }

 private:
  Status finish() {
    const size_t elem = dataTypeSize(g_.type);
    // Batch slices are whole images, contiguous in either format.
    xSliceBytes_ = static_cast<size_t>(g_.n / slices_ * g_.c * g_.h * g_.w) * elem;
    ySliceBytes_ = static_cast<size_t>(g_.n / slices_ * g_.k * g_.oh * g_.ow) * elem;
    const int64_t filter = (deconv_ ? g_.c * g_.kg : g_.k * g_.cg) * g_.kh * g_.kw;
    const bool packs = g_.channelsLast && !g_.weightsChannelsLast;
    filterBytes_ = packs ? align256(static_cast<size_t>(filter) * elem) : 0;
    workspace_ = filterBytes_ + cudnnBytes_;
    return Status::ok();
  }

  ConvGeometry g_;
  bool deconv_;
  int rank_;    // which usable algorithm of the heuristic's list
  int slices_;  // batch slices run one after the other (1: the whole batch at once)
  Descriptors d_;
  cudnnConvolutionFwdAlgo_t fwdAlgo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwdAlgo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t cudnnBytes_ = 0, filterBytes_ = 0, workspace_ = 0;
  size_t xSliceBytes_ = 0, ySliceBytes_ = 0;  // one batch slice of x and of y
};

}  // namespace

Status withCudnnQueryHandle(const std::function<Status(void* handle)>& f) {
  static std::mutex mutex;
  static cudnnHandle_t handle = nullptr;  // lives as long as the process
  std::lock_guard<std::mutex> lock(mutex);
  if (!handle) {
    if (deviceCount() == 0) return unsupported("no CUDA GPU to query cuDNN: " + noDeviceReason());
    KILN_CUDNN_CHECK(cudnnCreate(&handle));
  }
  return f(handle);
}

std::unique_ptr<Kernel> createCudnnConvolution(const ConvGeometry& g, bool deconv,
                                               std::string* whyNot, int rank, int slices) {
  if (g.type != DataType::kFLOAT && g.type != DataType::kHALF) {
    if (whyNot) *whyNot = std::string("cudnn: fp32 and fp16 only, got ") + dataTypeName(g.type);
    return nullptr;
  }
  if (deviceCount() == 0) {
    if (whyNot) *whyNot = "cudnn: no CUDA GPU to choose an algorithm on: " + noDeviceReason();
    return nullptr;
  }
  for (int64_t v :
       {g.n, g.c, g.h, g.w, g.k, g.oh, g.ow, g.n * g.c * g.h * g.w, g.n * g.k * g.oh * g.ow}) {
    if (!fitsInt32(v)) {
      if (whyNot) *whyNot = "cudnn: a dimension or tensor size exceeds 32-bit int";
      return nullptr;
    }
  }
  if (slices > 1 && (deconv || g.n % slices != 0)) {
    if (whyNot)
      *whyNot = "cudnn: " + std::to_string(slices) +
                " batch slices need a convolution whose batch (" + std::to_string(g.n) +
                ") they divide";
    return nullptr;
  }
  if (slices > 1) {
    // Slicing only pays where the whole batch's scratch is large; elsewhere it would only lengthen
    // the build with candidates that cannot win.
    ConvCudnn whole(g, deconv, rank, 1);
    const Status s = whole.init();
    if (!s || whole.workspaceSize() < kSlicesWorthBytes) {
      if (whyNot)
        *whyNot = "cudnn: batch slices only where the whole batch's workspace is at least " +
                  std::to_string(kSlicesWorthBytes >> 20) + " MiB" +
                  (s ? " (it is " + std::to_string(whole.workspaceSize() >> 20) + " MiB)"
                     : ": " + s.message());
      return nullptr;
    }
  }
  auto kernel = std::make_unique<ConvCudnn>(g, deconv, rank, slices);
  const Status s = kernel->init();
  if (!s) {
    if (whyNot) *whyNot = "cudnn: " + s.message();
    return nullptr;
  }
  return kernel;
}

}  // namespace kiln::cuda
