// Reformat on CUDA: type conversion and linear <-> channels-last (rank 4) in one pass, between
// every type pair ops::Reformat::infer allows. Tactics, fastest first:
//   per_pixel  a format change over few channels (a network's image input, 3 channels; its
//              logits): one index per pixel, looping over its channels, so the planar side is
//              read or written coalesced across threads and the packed side as each thread's
//              own run, with one 64-bit division per pixel instead of per element.
//   reference  one index per output element, every case.
// The value rules are
// reformat_semantics.h, shared with the CPU kernel; fp16 and bf16 convert with the CUDA
// intrinsics here. Bool is stored as uint8_t and int8 as int8_t, so the two are distinct storage
// types.
#include <type_traits>

#include "backends/cuda/elements.cuh"
#include "backends/cuda/layer_checks.h"
#include "backends/cuda/rank4_index.cuh"
#include "backends/cuda/typed_kernel.cuh"
#include "ops/op.h"
#include "ops/reformat/reformat_checks.h"
#include "ops/reformat/reformat_semantics.h"

namespace kiln::cuda {
namespace {

using ops::reformat::Kind;

// A CUDA storage type as reformat_semantics.h's convert() sees it.
template <class T>
struct Storage {
  using S = T;
  static constexpr Kind kKind =
      std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>
          ? Kind::kFloat
      : std::is_same_v<T, uint8_t> ? Kind::kBool
                                   : Kind::kInt;
  __host__ __device__ static float toFloat(T v) { return cuda::toFloat(v); }
  __host__ __device__ static T fromFloat(float f) { return cuda::fromFloat<T>(f); }
};

struct ReformatLayout {
  int64_t count = 0;
  int64_t C = 1, H = 1, W = 1;   // rank 4 when the formats differ
  bool transpose = false;        // formats differ
  bool outChannelsLast = false;  // memory order of the output (when transpose)
};

template <class S, class D>
struct ReformatOp {
  const S* in;
  D* out;
  ReformatLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    int64_t src = i;
    if (l.transpose) {
      // i is the output's memory index; find the logical (n, c, h, w) and the input offset.
      int64_t n, c, h, w;
      decode4(i, l.C, l.H, l.W, l.outChannelsLast, &n, &c, &h, &w);
      src = offset4(n, c, h, w, l.C, l.H, l.W, !l.outChannelsLast);
    }
    out[i] = ops::reformat::convert<Storage<S>, Storage<D>>(in[src]);
  }
};

// per_pixel: index i is pixel (n, p) of the H W pixels of image n.
template <class S, class D>
struct PixelReformatOp {
  const S* in;
  D* out;
  ReformatLayout l;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t hw = l.H * l.W;
    const int64_t n = i / hw, p = i - n * hw;
    for (int64_t c = 0; c < l.C; ++c) {
      const int64_t planar = (n * l.C + c) * hw + p, packed = i * l.C + c;
      if (l.outChannelsLast)
        out[packed] = ops::reformat::convert<Storage<S>, Storage<D>>(in[planar]);
      else
        out[planar] = ops::reformat::convert<Storage<S>, Storage<D>>(in[packed]);
    }
  }
};

// Op's index space: every output element, or (per_pixel) every pixel.
template <template <class, class> class Op, class S, class D>
Status runReformat(const ReformatLayout& l, const void* in, void* out, const RunContext& ctx) {
  constexpr bool kPixels = std::is_same_v<Op<S, D>, PixelReformatOp<S, D>>;
  return launchElements(Op<S, D>{static_cast<const S*>(in), static_cast<D*>(out), l},
                        kPixels ? l.count / l.C : l.count, ctx,
                        kPixels ? "reformat_per_pixel" : "reformat");
}

using ReformatFn = Status (*)(const ReformatLayout&, const void*, void*, const RunContext&);

template <template <class, class> class Op, class S>
ReformatFn reformatTo(DataType dst) {
  // Only the pairs ops::Reformat::infer allows are instantiated.
  constexpr Kind ks = Storage<S>::kKind;
  switch (dst) {
    case DataType::kFLOAT:
      if constexpr (ks == Kind::kFloat || std::is_same_v<S, int32_t> ||
                    std::is_same_v<S, int64_t> || ks == Kind::kBool)
        return &runReformat<Op, S, float>;
      break;
    case DataType::kHALF:
      if constexpr (ks == Kind::kFloat) return &runReformat<Op, S, __half>;
      break;
    case DataType::kBF16:
      if constexpr (ks == Kind::kFloat) return &runReformat<Op, S, __nv_bfloat16>;
      break;
    case DataType::kINT8:
      if constexpr (ks != Kind::kFloat) return &runReformat<Op, S, int8_t>;
      break;
    case DataType::kINT32:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>)
        return &runReformat<Op, S, int32_t>;
      break;
    case DataType::kINT64:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>)
        return &runReformat<Op, S, int64_t>;
      break;
    case DataType::kBOOL:
      if constexpr (ks != Kind::kFloat || std::is_same_v<S, float>)
        return &runReformat<Op, S, uint8_t>;
      break;
  }
  return nullptr;
}

template <template <class, class> class Op>
ReformatFn reformatFor(DataType src, DataType dst) {
  ReformatFn fn = nullptr;
  AllTypes::dispatch(src, [&](auto s) { fn = reformatTo<Op, decltype(s)>(dst); });
  return fn;
}

class ReformatKernel final : public Kernel {
 public:
  ReformatKernel(ReformatFn fn, ReformatLayout l) : fn_(fn), l_(l) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    return fn_(l_, in[0], out[0], ctx);
  }

 private:
  ReformatFn fn_;
  ReformatLayout l_;
};

// The layout of a validated configuration, with Op's kernel; nullptr with *whyNot if none.
template <template <class, class> class Op>
KernelPtr createWith(const KernelConfig& c, const char* tactic, std::string* whyNot,
                     ReformatLayout& l) {
  const ReformatParams* p = validate<ReformatParams>(c, "reformat", 1, false, whyNot);
  if (!p || !ops::reformat::checkOutputFormat(*p, c.outputs[0].format, whyNot)) return nullptr;
  const PluginTensorDesc& in = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  const ReformatFn fn = reformatFor<Op>(in.type, out.type);
  if (!fn) {  // inference has validated the pair; kept so a new enum value cannot crash here
    setWhyNot(whyNot, std::string("reformat ") + tactic + ": no kernel for " +
                          dataTypeName(in.type) + " to " + dataTypeName(out.type));
    return nullptr;
  }
  l.count = volume(in.dims);
  if (in.format != out.format) {  // both valid, so one is channels-last: rank 4 (validated)
    l.transpose = true;
    l.outChannelsLast = out.format == TensorFormat::kCHANNELS_LAST;
    l.C = in.dims.d[1];
    l.H = in.dims.d[2];
    l.W = in.dims.d[3];
  }
  return std::make_unique<ReformatKernel>(fn, l);
}

// Over more channels a thread's packed run would be long and the planar side's rows many apart.
constexpr int64_t kPixelMaxChannels = 16;

KernelPtr createPerPixel(const KernelConfig& c, std::string* whyNot) {
  ReformatLayout l;
  KernelPtr k = createWith<PixelReformatOp>(c, "per_pixel", whyNot, l);
  if (!k) return nullptr;
  if (!l.transpose || l.C > kPixelMaxChannels || l.C < 1) {
    setWhyNot(whyNot, "reformat per_pixel: for a format change over at most " +
                          std::to_string(kPixelMaxChannels) + " channels");
    return nullptr;
  }
  return k;
}

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  ReformatLayout l;
  return createWith<ReformatOp>(c, "reference", whyNot, l);
}

constexpr Tactic kTactics[] = {{"per_pixel", &createPerPixel}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cuda

std::span<const kiln::Tactic> kiln::ops::Reformat::cudaTactics() { return cuda::kTactics; }
