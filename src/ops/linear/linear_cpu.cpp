// CPU Linear: sgemm with the epilogue in one pass over the output, and the plain reference. fp32
// linear only; the builder reformats around it.
//
// The sgemm tactic computes X W into Y (X's leading dims are rows of one [rows, K] matrix: X is
// contiguous), then walks Y once, row by row while the row is in cache, adding the bias and the
// residual and applying the activation in that order, each step rounded to fp32: the same
// operations, in the same order, as the unfused MatMul -> Add -> Add -> Activation layers, so
// fusing changes no bits on the CPU, except for the erf GELU: there the epilogue runs the
// vectorized form (backends/cpu/gelu_row.h, a few ulp from the Activation layer's erff, which is a
// call per element and was an eighth of ViT-B/16's time). A constant W is packed once, at
// creation.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/gelu_row.h"
#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "backends/cpu/thread_pool.h"
#include "ops/activation/activation_semantics.h"
#include "ops/linear/linear_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

struct LinearGeometry {
  LinearParams p;
  int64_t rows = 0, n = 0, k = 0;  // Y [rows, n] = X [rows, k] W [k, n]
};

LinearGeometry linearGeometry(const KernelConfig& config, const LinearParams& p) {
  const Dims& x = config.inputs[0].dims;
  LinearGeometry g;
  g.p = p;
  g.k = x.d[x.nbDims - 1];
  g.n = config.outputs[0].dims.d[config.outputs[0].dims.nbDims - 1];
  g.rows = 1;
  for (int32_t i = 0; i + 1 < x.nbDims; ++i) g.rows *= x.d[i];
  return g;
}

// The layer's buffers: bias and residual null when absent.
struct LinearBuffers {
  const float* x;
  const float* w;
  const float* bias;
  const float* residual;
  float* y;
};

LinearBuffers linearBuffers(const LinearParams& p, const void* const* in, void* const* out) {
  const ops::linear::InputSlots s(p);
  return {static_cast<const float*>(in[0]), static_cast<const float*>(in[1]),
          s.bias >= 0 ? static_cast<const float*>(in[s.bias]) : nullptr,
          s.residual >= 0 ? static_cast<const float*>(in[s.residual]) : nullptr,
          static_cast<float*>(out[0])};
}

// Plain loops with double accumulation; the sum of product, bias and residual rounded once to
// fp32 before the activation.
Status linearReference(const LinearGeometry& g, const void* const* in, void* const* out) {
  const LinearBuffers b = linearBuffers(g.p, in, out);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (int64_t q = 0; q < g.k; ++q)
        sum += static_cast<double>(b.x[r * g.k + q]) *
               ops::linear::weight(b.w, g.p.transposeW, g.k, g.n, q, j);
      if (b.bias) sum += b.bias[j];
      if (b.residual) sum += b.residual[r * g.n + j];
      b.y[r * g.n + j] = ops::linear::activate(g.p, static_cast<float>(sum));
    }
  return Status::ok();
}

// The activation over one row, the type fixed at compile time so that the loop vectorises where
// the function allows.
using RowActivation = void (*)(float* row, int64_t n, float alpha, float beta);

template <ActivationType kType>
void activateRow(float* row, int64_t n, float alpha, float beta) {
  for (int64_t j = 0; j < n; ++j) row[j] = ops::activation::activate<kType>(row[j], alpha, beta);
}

// The erf GELU of a transformer's fc1 in its vectorized form (gelu_term.h: erff is a call per
// element), within a few ulp of the Activation layer's erff form.
template <>
void activateRow<ActivationType::kGELU>(float* row, int64_t n, float, float) {
  geluErfRow(row, n);
}

// nullptr: no activation (the shape rule refused kNOT and unknown types).
RowActivation rowActivationFor(const LinearParams& p) {
  if (!p.hasActivation) return nullptr;
  switch (p.activation) {
#define KILN_ACTIVATION_CASE(kTYPE) \
  case ActivationType::kTYPE:       \
    return &activateRow<ActivationType::kTYPE>;
    KILN_FLOAT_ACTIVATIONS(KILN_ACTIVATION_CASE)
#undef KILN_ACTIVATION_CASE
    case ActivationType::kNOT:
      break;
  }
  return nullptr;
}

// Output elements per epilogue task: enough that a task outweighs handing it to a thread.
constexpr int64_t kEpilogueTaskElements = 16384;

class LinearSgemm final : public Kernel {
 public:
  LinearSgemm(const LinearGeometry& g, const void* constW)
      : g_(g), activation_(rowActivationFor(g.p)) {
    if (constW && g_.k > 0)
      packedW_ = PackedMatrix::packB(g_.k, g_.n, weightRef(static_cast<const float*>(constW)));
    hasPackedW_ = constW != nullptr && g_.k > 0;
    const int64_t elements = g_.rows * g_.n;
    tasks_ = std::max<int64_t>(1, std::min<int64_t>(g_.rows, elements / kEpilogueTaskElements));
  }

  size_t workspaceSize() const override { return sgemmWorkspaceSize(g_.rows, g_.n, g_.k); }

  Status run(const void* const* in, void* const* out, void* workspace) const override {
    const LinearBuffers b = linearBuffers(g_.p, in, out);
    if (g_.rows == 0 || g_.n == 0) return Status::ok();
    if (g_.k == 0) {
      std::fill(b.y, b.y + g_.rows * g_.n, 0.f);  // an empty sum
    } else {
      GemmOperand x, w;
      x.raw = {b.x, g_.k, false};
      if (hasPackedW_) {
        w.packed = &packedW_;
      } else {
        w.raw = weightRef(b.w);
      }
      sgemm(g_.rows, g_.n, g_.k, 1.f, x, w, 0.f, b.y, g_.n, workspace);
    }
    if (!b.bias && !b.residual && !activation_) return Status::ok();
    // Rows are independent: the bits do not depend on which thread takes them.
    const int64_t perTask = (g_.rows + tasks_ - 1) / tasks_;
    parallelFor(tasks_, cpuThreadCount(), [&](int64_t t, int) {
      const int64_t end = std::min(g_.rows, (t + 1) * perTask);
      for (int64_t r = t * perTask; r < end; ++r) epilogueRow(b, r);
    });
    return Status::ok();
  }

 private:
  MatrixRef weightRef(const float* w) const {
    return {w, g_.p.transposeW ? g_.k : g_.n, g_.p.transposeW};
  }

  void epilogueRow(const LinearBuffers& b, int64_t r) const {
    float* row = b.y + r * g_.n;
    if (b.bias)
      for (int64_t j = 0; j < g_.n; ++j) row[j] += b.bias[j];
    if (b.residual) {
      const float* res = b.residual + r * g_.n;
      for (int64_t j = 0; j < g_.n; ++j) row[j] += res[j];
    }
    if (activation_) activation_(row, g_.n, g_.p.activationAlpha, g_.p.activationBeta);
  }

  LinearGeometry g_;
  RowActivation activation_;
  PackedMatrix packedW_;
  bool hasPackedW_ = false;
  int64_t tasks_ = 1;
};

KernelPtr createLinearSgemm(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validateFp32Linear<LinearParams>(config, "linear", "sgemm", ops::Linear::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<LinearSgemm>(linearGeometry(config, *p), constantInput(config, 1));
}

KernelPtr createLinearReference(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validateFp32Linear<LinearParams>(config, "linear", "reference", ops::Linear::infer, whyNot);
  if (!p) return nullptr;
  return makeReferenceKernel<linearReference>(linearGeometry(config, *p));
}

// The reference reads each residual element just before writing that output element, so it may
// run in place; sgemm writes the product first and adds the residual after.
constexpr Tactic kTactics[] = {{"sgemm", &createLinearSgemm},
                               {"reference", &createLinearReference, true}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Linear::cpuTactics() { return cpu::kTactics; }
