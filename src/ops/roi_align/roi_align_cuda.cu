// RoiAlign on CUDA (ONNX opset 16), one thread per output element. One tactic: "reference". The
// bins, samples and the bin value (average, or max with a NaN winning) are
// roi_align_semantics.h, shared with the CPU reference, in double and in the same order. Storage
// is fp32, fp16 or bf16 (X, rois and output): values convert to float on load and round once on
// store. Takes linear and channels-last (rank 4) independently on X and the output.
//
// Bad rois. The CPU reference checks every roi before writing and fails run() when a batch
// index is outside [0, N), a coordinate is not finite, or an adaptive grid would exceed 2^24
// samples per bin. Here run() cannot see device data without synchronizing, so such a roi's
// outputs are written as 0 (nothing is read out of bounds and no thread loops for ages) and a
// 32-bit error flag in the workspace is set; run() resets it with cudaMemsetAsync first, so a
// caller that synchronizes may read workspace[0] != 0 as "some roi was invalid".
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/memory_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/roi_align/roi_align_semantics.h"

namespace kiln::cuda {
namespace {

namespace sem = ops::roi_align;

struct RoiAlignLayout {
  int64_t N = 0, C = 0, H = 0, W = 0, R = 0;
  int64_t oh = 1, ow = 1;
  int32_t samplingRatio = 0;
  double spatialScale = 1.0;
  bool halfPixel = true;
  bool maxMode = false;
  bool xChannelsLast = false, outChannelsLast = false;
  bool int64Indices = false;
  DataType roiType = DataType::kFLOAT;
  int64_t count = 0;
};

__host__ __device__ inline float loadFloat(const void* p, int64_t i, DataType t) {
  switch (t) {
    case DataType::kHALF:
      return toFloat(static_cast<const __half*>(p)[i]);
    case DataType::kBF16:
      return toFloat(static_cast<const __nv_bfloat16*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

template <class T>
struct RoiAlignOp {
  const T* x;
  const void* rois;
  const void* batchIndices;
  T* out;
  int32_t* errorFlag;
  RoiAlignLayout l;

  __host__ __device__ void fail(int64_t i) const {
    out[i] = fromFloat<T>(0.f);
    *errorFlag = 1;  // every writer stores the same value: a benign race
  }

  __host__ __device__ void operator()(int64_t i) const {
    const int64_t dims[4] = {l.R, l.C, l.oh, l.ow};
    int64_t coord[4];
    decode(i, 4, dims, l.outChannelsLast, coord);
    const int64_t r = coord[0], c = coord[1], ph = coord[2], pw = coord[3];
    const int64_t b = l.int64Indices ? static_cast<const int64_t*>(batchIndices)[r]
                                     : static_cast<const int32_t*>(batchIndices)[r];
    float roi[4];
    for (int k = 0; k < 4; ++k) roi[k] = loadFloat(rois, r * 4 + k, l.roiType);
    if (b < 0 || b >= l.N) return fail(i);
    if (!sem::finiteRoi(roi)) return fail(i);
    if (l.H * l.W == 0) {  // no pixels: every sample falls outside the map
      out[i] = fromFloat<T>(0.f);
      return;
    }
    const sem::Bins g = sem::bins(roi, l.spatialScale, l.halfPixel, l.oh, l.ow, l.samplingRatio);
    if (!g.withinLimits()) return fail(i);
    int64_t yLo, yHi, xLo, xHi;
    sem::sampleRange(g.startH + ph * g.binH, g.binH / static_cast<double>(g.gridH), g.gridH, l.H,
                     yLo, yHi);
    sem::sampleRange(g.startW + pw * g.binW, g.binW / static_cast<double>(g.gridW), g.gridW, l.W,
                     xLo, xHi);
    auto pixel = [this, b, c](int64_t py, int64_t px) {
      return static_cast<double>(toFloat(x[offset4(b, c, py, px, l.C, l.H, l.W, l.xChannelsLast)]));
    };
    const double value = sem::binValue(g, ph, pw, yLo, yHi, xLo, xHi, l.H, l.W, l.maxMode, pixel);
    out[i] = fromFloat<T>(static_cast<float>(value));
  }
};

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(DataType type, RoiAlignLayout l) : type_(type), l_(l) {}

  size_t workspaceSize() const override { return sizeof(int32_t); }

  Status run(const void* const* in, void* const* out, void* workspace,
             const RunContext& ctx) const override {
    if (l_.count == 0) return Status::ok();
    auto* flag = static_cast<int32_t*>(workspace);
    if (ctx.emulate) {
      *flag = 0;
    } else {
      KILN_CUDA_CHECK(
          cudaMemsetAsync(flag, 0, sizeof(int32_t), static_cast<cudaStream_t>(ctx.stream)));
    }
    return launchTyped<FloatTypes>(type_, [&](auto tag) {
      using T = decltype(tag);
      return launchElements(RoiAlignOp<T>{static_cast<const T*>(in[0]), in[1], in[2],
                                          static_cast<T*>(out[0]), flag, l_},
                            l_.count, ctx, "roi_align");
    });
  }

 private:
  DataType type_;
  RoiAlignLayout l_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const RoiAlignParams* p = validate<RoiAlignParams>(c, "roi_align", 3, false, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc& x = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  if (!isFloatType(x.type) || !isFloatType(c.inputs[1].type)) {  // inference requires both
    setWhyNot(whyNot, "roi_align: X and rois must be fp32, fp16 or bf16");
    return nullptr;
  }
  RoiAlignLayout l;
  l.N = x.dims.d[0];
  l.C = x.dims.d[1];
  l.H = x.dims.d[2];
  l.W = x.dims.d[3];
  l.R = c.inputs[1].dims.d[0];
  l.oh = p->outputHeight;
  l.ow = p->outputWidth;
  l.samplingRatio = p->samplingRatio;
  l.spatialScale = p->spatialScale;
  l.halfPixel = p->halfPixel;
  l.maxMode = p->mode == RoiAlignMode::kMAX;
  l.xChannelsLast = x.format == TensorFormat::kCHANNELS_LAST;
  l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
  l.int64Indices = c.inputs[2].type == DataType::kINT64;
  l.roiType = c.inputs[1].type;
  l.count = volume(out.dims);
  return std::make_unique<RoiAlignKernel>(x.type, l);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::RoiAlign::cudaTactics() { return cuda::kTactics; }
