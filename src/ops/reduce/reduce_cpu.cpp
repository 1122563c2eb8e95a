// Reduce (sum, mean, max) over the axes of a mask on the CPU, fp32. One tactic: "reference",
// accumulating in double in the workspace (one double per output element) while it walks the
// input once in memory order. Over an empty axis: sum is 0, mean is NaN, max is -inf. max
// propagates NaN.
//
// Argmax over one axis writes int64 indices, the first index of the maximum. NaN counts as
// larger than every number (numpy's argmax): the first NaN along the axis wins. It reads fp32,
// int32 or int64 directly (no accumulation), so integers above 2^24 compare exactly. The NaN rules
// are reduce_semantics.h, which the CUDA kernels apply too.
#include <cmath>
#include <limits>

#include "backends/cpu/tactic_checks.h"
#include "ops/op.h"
#include "ops/reduce/reduce_semantics.h"

namespace kiln::cpu {
namespace {

class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceOp op, const Dims& in, uint32_t mask, int64_t outVolume)
      : op_(op), in_(in), outVolume_(outVolume) {
    // Strides into the output as if reduced dims were kept as 1; 0 along reduced dims (the
    // output's memory order is the same with or without keepDims).
    Dims kept = in;
    for (int32_t i = 0; i < in.nbDims; ++i)
      if ((mask >> i) & 1u) {
        kept.d[i] = 1;
        count_ *= in.d[i];
      }
    rowMajorStrides(kept, outStrides_);
    for (int32_t i = 0; i < in.nbDims; ++i)
      if ((mask >> i) & 1u) outStrides_[i] = 0;
  }

  size_t workspaceSize() const override { return static_cast<size_t>(outVolume_) * sizeof(double); }

  Status run(const void* const* in, void* const* out, void* workspace) const override {
    const float* x = static_cast<const float*>(in[0]);
    float* y = static_cast<float*>(out[0]);
    double* acc = static_cast<double*>(workspace);
    const double init = op_ == ReduceOp::kMAX ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < outVolume_; ++i) acc[i] = init;
    const int64_t vol = volume(in_);
    const int32_t r = in_.nbDims;
    if (vol > 0) {
      // The rank is at least 1: inference refuses an empty mask, so a scalar cannot get here.
      const int64_t n = in_.d[r - 1];
      const int64_t s = outStrides_[r - 1];
      int64_t coord[Dims::kMaxDims] = {};
      int64_t off = 0;
      for (int64_t row = 0; row < vol / n; ++row, x += n) {
        double* a = acc + off;
        if (op_ == ReduceOp::kMAX) {
          for (int64_t i = 0; i < n; ++i) {
            const double v = x[i];
            if (ops::reduce::replacesMax(a[i * s], v)) a[i * s] = v;
          }
        } else {
          for (int64_t i = 0; i < n; ++i) a[i * s] += x[i];
        }
        for (int32_t k = r - 2; k >= 0; --k) {
          off += outStrides_[k];
          if (++coord[k] < in_.d[k]) break;
          off -= outStrides_[k] * in_.d[k];
          coord[k] = 0;
        }
      }
    }
    for (int64_t i = 0; i < outVolume_; ++i) {
      double v = acc[i];
      if (op_ == ReduceOp::kMEAN)
        v = count_ == 0 ? std::numeric_limits<double>::quiet_NaN()
                        : v / static_cast<double>(count_);
      y[i] = static_cast<float>(v);
    }
    return Status::ok();
  }

 private:
  ReduceOp op_;
  Dims in_;
  int64_t outVolume_;
  int64_t count_ = 1;  // input elements per output element
  int64_t outStrides_[Dims::kMaxDims] = {};
};

// The input seen as [outer, axis, inner], row-major; the output as [outer, inner].
template <class T>
class ArgMaxKernel final : public Kernel {
 public:
  ArgMaxKernel(int64_t outer, int64_t axis, int64_t inner)
      : outer_(outer), axis_(axis), inner_(inner) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const T* x = static_cast<const T*>(in[0]);
    int64_t* y = static_cast<int64_t*>(out[0]);
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t i = 0; i < inner_; ++i) {
        const T* v = x + o * axis_ * inner_ + i;
        const int64_t best =
            ops::reduce::argmaxIndex<T>(axis_, [v, this](int64_t k) { return v[k * inner_]; });
        y[o * inner_ + i] = best;
      }
    }
    return Status::ok();
  }

 private:
  int64_t outer_, axis_, inner_;
};

KernelPtr createArgMax(const KernelConfig& c, const ReduceParams& p, std::string* whyNot) {
  const Dims& d = c.inputs[0].dims;
  int32_t axis = 0;
  while (!((p.axesMask >> axis) & 1u)) ++axis;  // inference checked: exactly one bit, < rank
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= d.d[i];
  for (int32_t i = axis + 1; i < d.nbDims; ++i) inner *= d.d[i];
  switch (c.inputs[0].type) {
    case DataType::kFLOAT:
      return std::make_unique<ArgMaxKernel<float>>(outer, d.d[axis], inner);
    case DataType::kINT32:
      return std::make_unique<ArgMaxKernel<int32_t>>(outer, d.d[axis], inner);
    case DataType::kINT64:
      return std::make_unique<ArgMaxKernel<int64_t>>(outer, d.d[axis], inner);
    default:
      setWhyNot(whyNot, std::string("reduce: the CPU backend's argmax supports fp32, "
                                    "int32 and int64, got ") +
                            dataTypeName(c.inputs[0].type));
      return nullptr;
  }
}

KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  const ReduceParams* p = validate<ReduceParams>(c, "reduce", 1, &ops::Reduce::infer, whyNot);
  if (!p || !allLinear(c, "reduce", whyNot)) return nullptr;
  if (p->op == ReduceOp::kARGMAX) return createArgMax(c, *p, whyNot);
  if (c.inputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, std::string("reduce: the CPU backend supports fp32, got ") +
                          dataTypeName(c.inputs[0].type));
    return nullptr;
  }
  return std::make_unique<ReduceKernel>(p->op, c.inputs[0].dims, p->axesMask,
                                        volume(c.outputs[0].dims));
}

constexpr Tactic kTactics[] = {{"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Reduce::cpuTactics() { return cpu::kTactics; }
