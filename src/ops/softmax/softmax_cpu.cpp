// Softmax and log-softmax on the CPU, fp32, over any axis. One tactic: "reference". Numerically
// stable (the maximum along the axis is subtracted before exp; log-softmax is (x - m) - log(sum))
// and accumulated in double, so that it can serve as the yardstick for faster tactics. A slice
// that is all -inf, or holds NaN, gives NaN. The rules are softmax_semantics.h, which the CUDA
// kernels apply too (in float).
#include <cmath>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/softmax/softmax_semantics.h"

namespace kiln::cpu {
namespace {

using ops::softmax::logOf;
using ops::softmax::logSoftmaxValue;
using ops::softmax::raisesMax;
using ops::softmax::softmaxValue;
using ops::softmax::sumTerm;

class SoftmaxKernel final : public Kernel {
 public:
  // The tensor seen as [outer, axis, inner], row-major.
  SoftmaxKernel(int64_t outer, int64_t axis, int64_t inner, bool log)
      : outer_(outer), axis_(axis), inner_(inner), log_(log) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const float* x = static_cast<const float*>(in[0]);
    float* y = static_cast<float*>(out[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const int64_t base = o * axis_ * inner_ + i;
        double m = -INFINITY;
        for (int64_t k = 0; k < axis_; ++k) {
          const double v = x[base + k * inner_];
          if (raisesMax(m, v)) m = v;
        }
        double sum = 0;
        for (int64_t k = 0; k < axis_; ++k) sum += sumTerm<double>(x[base + k * inner_], m);
        if (log_) {
          const double logSum = logOf(sum);
          for (int64_t k = 0; k < axis_; ++k) {
            const int64_t at = base + k * inner_;
            y[at] = static_cast<float>(logSoftmaxValue<double>(x[at], m, logSum));
          }
        } else {
          for (int64_t k = 0; k < axis_; ++k) {
            const int64_t at = base + k * inner_;
            y[at] = static_cast<float>(softmaxValue<double>(x[at], m, sum));
          }
        }
      }
    }
    return Status::ok();
  }

 private:
  int64_t outer_, axis_, inner_;
  bool log_;
};

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const SoftmaxParams* p = validate<SoftmaxParams>(c, "softmax", 1, &ops::Softmax::infer, whyNot);
  if (!p || !allLinear(c, "softmax", whyNot)) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, std::string("softmax: the CPU backend supports fp32, got ") +
                          dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  const Dims& d = c.inputs[0].dims;
  const int32_t axis = p->axis < 0 ? p->axis + d.nbDims : p->axis;  // validated by inference
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) inner *= d.d[i];
  return std::make_unique<SoftmaxKernel>(outer, d.d[axis], inner, p->log);
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Softmax::cpuTactics() { return cpu::kTactics; }
