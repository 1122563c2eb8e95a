// Reformat on the CPU: converts data type and memory format (linear <-> channels-last, rank 4)
// in one pass. One tactic: "reference". Which type pairs exist is decided by ops::Reformat::infer;
// the value rules are reformat_semantics.h, shared with the CUDA kernel (fp16 and bf16 convert
// through backends/cpu/float_elements.h here).
#include <cstring>

#include "backends/cpu/float_elements.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/reformat/reformat_checks.h"
#include "ops/reformat/reformat_semantics.h"

namespace kiln::cpu {
namespace {

using ops::reformat::Kind;

template <DataType T>
struct Elem;
template <>
struct Elem<DataType::kFLOAT> : FloatElement<DataType::kFLOAT> {
  static constexpr Kind kKind = Kind::kFloat;
};
template <>
struct Elem<DataType::kHALF> : FloatElement<DataType::kHALF> {
  static constexpr Kind kKind = Kind::kFloat;
};
template <>
struct Elem<DataType::kBF16> : FloatElement<DataType::kBF16> {
  static constexpr Kind kKind = Kind::kFloat;
};
template <>
struct Elem<DataType::kINT8> {
  using S = int8_t;
  static constexpr Kind kKind = Kind::kInt;
};
template <>
struct Elem<DataType::kINT32> {
  using S = int32_t;
  static constexpr Kind kKind = Kind::kInt;
};
template <>
struct Elem<DataType::kINT64> {
  using S = int64_t;
  static constexpr Kind kKind = Kind::kInt;
};
template <>
struct Elem<DataType::kBOOL> {
  using S = uint8_t;
  static constexpr Kind kKind = Kind::kBool;
};

// dst[i * ds] = convert(src[i * ss]) for i < n; strides in elements.
using ConvertLoop = void (*)(const void* src, int64_t ss, void* dst, int64_t ds, int64_t n);

template <DataType kSrc, DataType kDst>
void convertLoop(const void* src, int64_t ss, void* dst, int64_t ds, int64_t n) {
  using Src = Elem<kSrc>;
  using Dst = Elem<kDst>;
  const auto* s = static_cast<const typename Src::S*>(src);
  auto* d = static_cast<typename Dst::S*>(dst);
  if (ss == 1 && ds == 1) {
    for (int64_t i = 0; i < n; ++i) d[i] = ops::reformat::convert<Src, Dst>(s[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i * ds] = ops::reformat::convert<Src, Dst>(s[i * ss]);
  }
}

template <DataType kSrc>
ConvertLoop loopTo(DataType dst) {
  switch (dst) {
    case DataType::kFLOAT:
      return &convertLoop<kSrc, DataType::kFLOAT>;
    case DataType::kHALF:
      return &convertLoop<kSrc, DataType::kHALF>;
    case DataType::kBF16:
      return &convertLoop<kSrc, DataType::kBF16>;
    case DataType::kINT8:
      return &convertLoop<kSrc, DataType::kINT8>;
    case DataType::kINT32:
      return &convertLoop<kSrc, DataType::kINT32>;
    case DataType::kINT64:
      return &convertLoop<kSrc, DataType::kINT64>;
    case DataType::kBOOL:
      return &convertLoop<kSrc, DataType::kBOOL>;
  }
  return nullptr;
}

ConvertLoop loopFor(DataType src, DataType dst) {
  switch (src) {
    case DataType::kFLOAT:
      return loopTo<DataType::kFLOAT>(dst);
    case DataType::kHALF:
      return loopTo<DataType::kHALF>(dst);
    case DataType::kBF16:
      return loopTo<DataType::kBF16>(dst);
    case DataType::kINT8:
      return loopTo<DataType::kINT8>(dst);
    case DataType::kINT32:
      return loopTo<DataType::kINT32>(dst);
    case DataType::kINT64:
      return loopTo<DataType::kINT64>(dst);
    case DataType::kBOOL:
      return loopTo<DataType::kBOOL>(dst);
  }
  return nullptr;
}

class ReformatKernel final : public Kernel {
 public:
  ReformatKernel(ConvertLoop loop, size_t inElem, size_t outElem, TensorFormat inFormat,
                 TensorFormat outFormat, const Dims& dims)
      : loop_(loop),
        inElem_(static_cast<int64_t>(inElem)),
        outElem_(static_cast<int64_t>(outElem)),
        inFormat_(inFormat),
        outFormat_(outFormat),
        dims_(dims) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const auto* src = static_cast<const uint8_t*>(in[0]);
    auto* dst = static_cast<uint8_t*>(out[0]);
    if (inFormat_ == outFormat_) {
      loop_(src, 1, dst, 1, volume(dims_));
      return Status::ok();
    }
    // Rank 4 (checked at creation). Walk the output in memory order, one contiguous run per call.
    const int64_t N = dims_.d[0], C = dims_.d[1], H = dims_.d[2], W = dims_.d[3];
    if (outFormat_ == TensorFormat::kCHANNELS_LAST) {  // NCHW -> NHWC: runs along C
      for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w)
            loop_(src + ((n * C * H + h) * W + w) * inElem_, H * W,
                  dst + ((n * H + h) * W + w) * C * outElem_, 1, C);
    } else {  // NHWC -> NCHW: runs along W
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t h = 0; h < H; ++h)
            loop_(src + ((n * H + h) * W * C + c) * inElem_, C,
                  dst + ((n * C + c) * H + h) * W * outElem_, 1, W);
    }
    return Status::ok();
  }

 private:
  ConvertLoop loop_;
  int64_t inElem_, outElem_;
  TensorFormat inFormat_, outFormat_;
  Dims dims_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ReformatParams* p =
      validate<ReformatParams>(c, "reformat", 1, &ops::Reformat::infer, whyNot);
  if (!p || !ops::reformat::checkOutputFormat(*p, c.outputs[0].format, whyNot)) return nullptr;
  const PluginTensorDesc& in = c.inputs[0];
  const PluginTensorDesc& out = c.outputs[0];
  const ConvertLoop loop = loopFor(in.type, out.type);
  if (!loop) {  // inference has validated both types; kept so a new enum value cannot crash here
    setWhyNot(whyNot, "reformat: unknown data type");
    return nullptr;
  }
  return std::make_unique<ReformatKernel>(loop, dataTypeSize(in.type), dataTypeSize(out.type),
                                          in.format, out.format, in.dims);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Reformat::cpuTactics() { return cpu::kTactics; }
