// CPU Gemm (ONNX Gemm, and fully connected): sgemm, and the plain reference. fp32 linear only;
// the builder reformats around it.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "ops/gemm/gemm_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// ONNX Gemm: Y = alpha * op(A) op(B) + beta * C, C broadcast to [m, n] (gemm_semantics.h, as on
// CUDA).
struct GemmGeometry {
  GemmParams p;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0;
  bool hasC = false;
  int64_t cRows = 1, cCols = 1;  // C's extent after aligning it right to [m, n]

  float cAt(const float* c, int64_t i, int64_t j) const {
    return c[ops::gemm::cIndex(i, j, cRows, cCols)];
  }
};

GemmGeometry gemmGeometry(const KernelConfig& config, const GemmParams& p) {
  GemmGeometry g;
  g.p = p;
  const Dims& a = config.inputs[0].dims;
  const Dims& b = config.inputs[1].dims;
  g.m = config.outputs[0].dims.d[0];
  g.n = config.outputs[0].dims.d[1];
  g.k = p.transposeA ? a.d[0] : a.d[1];
  g.lda = a.d[1];
  g.ldb = b.d[1];
  g.hasC = config.inputs.size() == 3;
  if (g.hasC) {
    const Dims& c = config.inputs[2].dims;
    ops::gemm::cExtent(c.nbDims, c.d, &g.cRows, &g.cCols);
  }
  return g;
}

Status gemmReference(const GemmGeometry& g, const void* const* inputs, void* const* outputs) {
  const auto [a, b, c, y] = fp32Buffers(inputs, outputs, g.hasC);
  const GemmParams& p = g.p;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0;
      for (int64_t q = 0; q < g.k; ++q) {
        const float av = ops::gemm::elementA(a, p.transposeA, g.lda, i, q);
        const float bv = ops::gemm::elementB(b, p.transposeB, g.ldb, q, j);
        sum += static_cast<double>(av) * bv;
      }
      double v = static_cast<double>(p.alpha) * sum;
      if (c) v += static_cast<double>(p.beta) * g.cAt(c, i, j);
      y[i * g.n + j] = static_cast<float>(v);
    }
  return Status::ok();
}

// Y starts as beta * C (broadcast), then sgemm adds alpha * op(A) op(B). Computing beta * C
// first keeps ONNX's semantics exactly, even for beta 0 with non-finite C.
class GemmSgemm final : public Kernel {
 public:
  GemmSgemm(const GemmGeometry& g, const void* constA, const void* constB) : g_(g) {
    const GemmParams& p = g_.p;
    if (constA)
      packedA_ = PackedMatrix::packA(g_.m, g_.k,
                                     {static_cast<const float*>(constA), g_.lda, p.transposeA});
    if (constB)
      packedB_ = PackedMatrix::packB(g_.k, g_.n,
                                     {static_cast<const float*>(constB), g_.ldb, p.transposeB});
    hasPackedA_ = constA != nullptr;
    hasPackedB_ = constB != nullptr;
  }

  size_t workspaceSize() const override { return sgemmWorkspaceSize(g_.m, g_.n, g_.k); }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto* c = g_.hasC ? static_cast<const float*>(inputs[2]) : nullptr;
    auto* y = static_cast<float*>(outputs[0]);
    const GemmParams& p = g_.p;
    if (c) {
      for (int64_t i = 0; i < g_.m; ++i)
        for (int64_t j = 0; j < g_.n; ++j) y[i * g_.n + j] = p.beta * g_.cAt(c, i, j);
    }
    GemmOperand ga, gb;
    if (hasPackedA_) {
      ga.packed = &packedA_;
    } else {
      ga.raw = {static_cast<const float*>(inputs[0]), g_.lda, p.transposeA};
    }
    if (hasPackedB_) {
      gb.packed = &packedB_;
    } else {
      gb.raw = {static_cast<const float*>(inputs[1]), g_.ldb, p.transposeB};
    }
    sgemm(g_.m, g_.n, g_.k, p.alpha, ga, gb, c ? 1.f : 0.f, y, g_.n, workspace);
    return Status::ok();
  }

 private:
  GemmGeometry g_;
  PackedMatrix packedA_, packedB_;
  bool hasPackedA_ = false, hasPackedB_ = false;
};

KernelPtr createGemmSgemm(const KernelConfig& config, std::string* whyNot) {
  const auto* p = validateFp32Linear<GemmParams>(config, "gemm", "sgemm", ops::Gemm::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<GemmSgemm>(gemmGeometry(config, *p), constantInput(config, 0),
                                     constantInput(config, 1));
}

KernelPtr createGemmReference(const KernelConfig& config, std::string* whyNot) {
  const auto* p =
      validateFp32Linear<GemmParams>(config, "gemm", "reference", ops::Gemm::infer, whyNot);
  if (!p) return nullptr;
  return makeReferenceKernel<gemmReference>(gemmGeometry(config, *p));
}

constexpr Tactic kTactics[] = {{"sgemm", &createGemmSgemm}, {"reference", &createGemmReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::Gemm::cpuTactics() { return cpu::kTactics; }
