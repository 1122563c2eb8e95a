// Resize on CUDA (ONNX Resize, nearest and linear, any axes), one thread per output element. One
// tactic: "reference". Where each axis reads is resize_semantics.h, shared with the CPU
// reference; weights and sums are in double, in the CPU's order, so rounding ties (nearest
// modes, samples on a pixel border) fall the same way. Storage is fp32, fp16 or bf16: values
// convert to float on load and round once on store. (Double costs little on the data-centre
// GPUs kiln targets, and the kernel is memory bound.) Takes linear and channels-last (rank 4)
// independently on input and output.
#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/memory_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/resize/resize_semantics.h"

namespace kiln::cuda {
namespace {

constexpr int32_t kMaxRank = Dims::kMaxDims;

struct ResizeLayout {
  int32_t rank = 0;
  int64_t inDims[kMaxRank] = {};
  int64_t outDims[kMaxRank] = {};
  float scales[kMaxRank] = {};
  ResizeMode mode = ResizeMode::kNEAREST;
  ResizeCoordinates coordinates = ResizeCoordinates::kHALF_PIXEL;
  ResizeRounding rounding = ResizeRounding::kROUND_PREFER_FLOOR;
  bool inChannelsLast = false, outChannelsLast = false;
  int64_t count = 0;
};

template <class T>
struct ResizeOp {
  const T* in;
  T* out;
  ResizeLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t coord[kMaxRank], lo[kMaxRank], hi[kMaxRank];
    double w[kMaxRank];
    decode(i, l.rank, l.outDims, l.outChannelsLast, coord);
    int32_t active[kMaxRank];
    int32_t nbActive = 0;
    for (int32_t a = 0; a < l.rank; ++a) {
      const ops::resize::Tap t = ops::resize::tap(l.mode, l.coordinates, l.rounding, coord[a],
                                                  l.inDims[a], l.outDims[a], l.scales[a]);
      lo[a] = t.lo;
      hi[a] = t.hi;
      w[a] = t.w;
      if (t.w != 0.0) active[nbActive++] = a;
    }
    // The CPU blends over the axes where any output has a weight; axes whose weight is 0 for
    // this element only multiply by 1 or skip a zero-weight corner there, so blending over this
    // element's own weighted axes, in the same order, gives the same double sum.
    double sum = 0.0;
    int64_t pick[kMaxRank];
    const int64_t corners = int64_t{1} << nbActive;
    for (int64_t corner = 0; corner < corners; ++corner) {
      double weight = 1.0;
      for (int32_t a = 0; a < l.rank; ++a) pick[a] = lo[a];
      for (int32_t k = 0; k < nbActive; ++k) {
        const int32_t a = active[k];
        if (corner >> k & 1) {
          pick[a] = hi[a];
          weight *= w[a];
        } else {
          weight *= 1.0 - w[a];
        }
      }
      if (weight != 0.0)
        sum += weight *
               static_cast<double>(toFloat(in[encode(pick, l.rank, l.inDims, l.inChannelsLast)]));
    }
    out[i] = fromFloat<T>(static_cast<float>(sum));
  }
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ResizeParams* p = validate<ResizeParams>(c, "resize", 1, false, whyNot);
  if (!p) return nullptr;
  const PluginTensorDesc& in = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  if (!isFloatType(in.type)) {  // inference already requires it; kept for the dispatch below
    setWhyNot(whyNot,
              std::string("resize: needs fp32, fp16 or bf16, got ") + dataTypeName(in.type));
    return nullptr;
  }
  ResizeLayout l;
  l.rank = in.dims.nbDims;
  for (int32_t a = 0; a < l.rank; ++a) {
    l.inDims[a] = in.dims.d[a];
    l.outDims[a] = out.dims.d[a];
    l.scales[a] = p->scales[a];
  }
  l.mode = p->mode;
  l.coordinates = p->coordinates;
  l.rounding = p->rounding;
  l.inChannelsLast = in.format == TensorFormat::kCHANNELS_LAST;
  l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
  l.count = volume(out.dims);
  return makeTypedKernel<FloatTypes>(in.type, [l](auto tag, const void* const* inputs,
                                                  void* const* outputs, const RunContext& ctx) {
    using T = decltype(tag);
    return launchElements(
        ResizeOp<T>{static_cast<const T*>(inputs[0]), static_cast<T*>(outputs[0]), l}, l.count, ctx,
        "resize");
  });
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Resize::cudaTactics() { return cuda::kTactics; }
