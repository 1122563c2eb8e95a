// Local response normalization across channels (ONNX LRN) on CUDA. One tactic, "reference": one
// per-element function per output element (emulatable on the host), linear or channels-last.
//
// Value rules: lrn_semantics.h, the CPU's (lrn_cpu.cpp), evaluated in fp32 here: the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels,
// y = x / pow(bias + alpha / size * sum(x^2), beta).
#include <cstdint>

#include "backends/config_checks.h"
#include "backends/cuda/elements.cuh"
#include "backends/cuda/strided_index.cuh"
#include "ops/lrn/lrn_semantics.h"
#include "ops/op.h"

namespace kiln::cuda::lrn {
namespace {

template <class T>
struct LrnElement {
  const T* x;
  T* y;
  ChannelView v;
  int64_t before, after;
  float alphaOverSize, bias, beta;
  __host__ __device__ void operator()(int64_t i) const {
    const int64_t s = i % v.S, c = (i / v.S) % v.C, n = i / (v.S * v.C);
    const float sum = ops::lrn::windowSumOfSquares<float>(
        ops::lrn::window(c, before, after, v.C),
        [&](int64_t j) { return toFloat(x[v.at(n, j, s, v.inLast)]); });
    const float denom = ops::lrn::denominator(sum, alphaOverSize, bias, beta);
    y[v.at(n, c, s, v.outLast)] = fromFloat<T>(toFloat(x[v.at(n, c, s, v.inLast)]) / denom);
  }
};

class LrnReference final : public Kernel {
 public:
  LrnReference(DataType t, const ChannelView& v, const LRNParams& p) : type_(t), v_(v), p_(p) {}
  Status run(const void* const* in, void* const* out, void*, const RunContext& ctx) const override {
    Status s = Status::ok();
    dispatchFloat(type_, [&](auto tag) {
      using T = decltype(tag);
      LrnElement<T> f{static_cast<const T*>(in[0]),
                      static_cast<T*>(out[0]),
                      v_,
                      ops::lrn::channelsBefore(p_.size),
                      ops::lrn::channelsAfter(p_.size),
                      static_cast<float>(ops::lrn::alphaOverSize(p_.alpha, p_.size)),
                      p_.bias,
                      p_.beta};
      s = launchElements(f, v_.N * v_.C * v_.S, ctx, "lrn_reference");
    });
    return s;
  }

 private:
  DataType type_;
  ChannelView v_;
  LRNParams p_;
};

std::unique_ptr<Kernel> createReference(const KernelConfig& c, std::string* whyNot) {
  const LRNParams* p =
      config_checks::validate<LRNParams>(c, DeviceKind::kCUDA, "lrn", 1, &ops::LRN::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<LrnReference>(c.inputs[0].type, channelView(c.inputs[0], c.outputs[0]),
                                        *p);
}

constexpr Tactic kTactics[] = {
    {"reference", &createReference},
};

}  // namespace
}  // namespace kiln::cuda::lrn

namespace kiln::ops {

std::span<const Tactic> LRN::cudaTactics() { return cuda::lrn::kTactics; }

}  // namespace kiln::ops
