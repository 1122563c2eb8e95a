// LayerNormalization on the CPU: "vectorized", FP32 rows whose Scale and B are whole rows (as
// every transformer's): the same three passes with the sums over eight interleaved partial sums
// and contiguous parameters, so that the compiler vectorizes every loop (not bitwise the
// reference: the sums round in another order), the rows over the thread pool; "split", the rows
// over the CPU thread pool (bitwise the reference's results), where there are at least two;
// "reference", row by row, linear tensors of
// fp32, fp16 or bf16 (X, Scale, B and Y of one type; fp16 and bf16 convert through
// backends/cpu/float_elements.h). The arithmetic, FP32 and two-pass whatever the storage, is
// layer_normalization_semantics.h, which the CUDA kernels run too. The 16-bit types are taken here,
// unlike most CPU float kernels, so that a half network keeps its bytes and the FP32 statistics can
// be tested on the host.
#include <algorithm>
#include <string>

#include "backends/cpu/thread_pool.h"
#include "ops/layer_normalization/layer_normalization_semantics.h"
#include "ops/op.h"
#include "ops/row_normalization_cpu.h"

namespace kiln::cpu {
namespace {

namespace ln = ops::layer_normalization;

KernelPtr create(const KernelConfig& c, bool split, std::string* whyNot) {
  const auto* p = row_normalization::validate<LayerNormalizationParams>(
      c, "layer_normalization", -1, &ops::LayerNormalization::infer, "Scale and B", whyNot);
  if (!p) return nullptr;
  const auto g = ln::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims,
                                 c.inputs.size() == 3 ? &c.inputs[2].dims : nullptr);
  if (split && g.rows < 2) {
    setWhyNot(whyNot, "layer_normalization: split: one row, nothing to split");
    return nullptr;
  }
  return row_normalization::makeKernel<ln::StoredRow>(c, "layer_normalization", g, split);
}

KernelPtr createSplit(const KernelConfig& c, std::string* whyNot) {
  return create(c, true, whyNot);
}
KernelPtr createReference(const KernelConfig& c, std::string* whyNot) {
  return create(c, false, whyNot);
}

// Whether parameter index `p` reads one contiguous run of a row's `len` values (a row of one
// value reads element 0 either way).
bool wholeRow(const ln::ParamIndex& p, int64_t len) {
  return len == 1 || (p.rank == 1 && p.strides[0] == 1 && p.dims[0] == len);
}

// The sum of f(j) over [0, len) in kLanes interleaved partial sums (a loop the compiler keeps in
// vector registers, where one running sum is a chain of dependent adds), then added pairwise.
template <class F>
float laneSum(int64_t len, const F& f) {
  constexpr int kLanes = 8;
  float lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= len; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] += f(j + k);
  for (; j < len; ++j) lanes[0] += f(j);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  return lanes[0];
}

class VectorizedRows final : public Kernel {
 public:
  explicit VectorizedRows(const ln::RowGeometry& g) : g_(g) {}

  Status run(const void* const* in, void* const* out, void*) const override {
    const auto* x = static_cast<const float*>(in[0]);
    const auto* scale = static_cast<const float*>(in[1]);
    const auto* bias = g_.hasBias ? static_cast<const float*>(in[2]) : nullptr;
    auto* y = static_cast<float*>(out[0]);
    const int64_t len = g_.len;
    auto rowsFrom = [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float* xr = x + r * len;
        float* yr = y + r * len;
        // layer_normalization_semantics.h's passes: the shifted mean, the squared deviations.
        const float x0 = xr[0];
        const float mean = ln::meanOf(x0, laneSum(len, [&](int64_t j) { return xr[j] - x0; }), len);
        const float squares = laneSum(len, [&](int64_t j) {
          const float d = xr[j] - mean;
          return d * d;
        });
        const float inv = ln::invStdDevOf(squares, len, g_.epsilon);
        if (bias) {
          for (int64_t j = 0; j < len; ++j)
            yr[j] = ln::normalized(xr[j], mean, inv, scale[j], bias[j]);
        } else {
          for (int64_t j = 0; j < len; ++j) yr[j] = ln::normalized(xr[j], mean, inv, scale[j], 0.f);
        }
      }
    };
    // A few tasks per thread, so that uneven threads even out.
    const int64_t tasks = std::min<int64_t>(g_.rows, 4 * int64_t{cpuThreadCount()});
    parallelFor(tasks, cpuThreadCount(),
                [&](int64_t t, int) { rowsFrom(t * g_.rows / tasks, (t + 1) * g_.rows / tasks); });
    return Status::ok();
  }

 private:
  ln::RowGeometry g_;
};

KernelPtr createVectorized(const KernelConfig& c, std::string* whyNot) {
  const auto* p = row_normalization::validate<LayerNormalizationParams>(
      c, "layer_normalization", -1, &ops::LayerNormalization::infer, "Scale and B", whyNot);
  if (!p) return nullptr;
  if (c.inputs[0].type != DataType::kFLOAT) {
    setWhyNot(whyNot, "layer_normalization: vectorized: fp32 only");
    return nullptr;
  }
  const auto g = ln::rowGeometry(p->axis, p->epsilon, c.inputs[0].dims, c.inputs[1].dims,
                                 c.inputs.size() == 3 ? &c.inputs[2].dims : nullptr);
  if (g.rows == 0 || !wholeRow(g.scale, g.len) || (g.hasBias && !wholeRow(g.bias, g.len))) {
    setWhyNot(whyNot,
              "layer_normalization: vectorized: Scale and B must each be one whole row (no "
              "broadcast inside the row), and X must have rows");
    return nullptr;
  }
  return std::make_unique<VectorizedRows>(g);
}

constexpr Tactic kTactics[] = {
    {"vectorized", &createVectorized}, {"split", &createSplit}, {"reference", &createReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::LayerNormalization::cpuTactics() { return cpu::kTactics; }
