// CPU MatrixMultiply (batched numpy matmul): sgemm, and the plain reference. fp32 linear only;
// the builder reformats around it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/sgemm.h"
#include "backends/cpu/tactic_checks.h"
#include "backends/cpu/thread_pool.h"
#include "ops/matrix_multiply/matrix_multiply_semantics.h"
#include "ops/op.h"

namespace kiln::cpu {
namespace {

// A batch of independent products C_b = op(A_{a(b)}) op(B_{b(b)}), C_b consecutive [m, n]
// blocks of the output; a(b), b(b) index the stored matrices of A and B after broadcasting.
struct ProductPlan {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0;
  int64_t aMatrices = 1, bMatrices = 1;  // stored matrices in each input
  std::vector<int64_t> aIndex, bIndex;   // per product
};

// For each output batch index, the stored matrix of A and of B it reads: numpy broadcasting of the
// leading dims (matrix_multiply_semantics.h, as on CUDA), counted in matrices.
void broadcastIndex(const Dims& out, const Dims& a, const Dims& b, std::vector<int64_t>& aIndex,
                    std::vector<int64_t>& bIndex) {
  const int32_t batch = out.nbDims - 2;
  int64_t count = 1;
  for (int32_t i = 0; i < batch; ++i) count *= out.d[i];
  int64_t aStrides[Dims::kMaxDims] = {}, bStrides[Dims::kMaxDims] = {};
  ops::matrix_multiply::broadcastStrides(batch, a.d, a.nbDims - 2, 1, aStrides);
  ops::matrix_multiply::broadcastStrides(batch, b.d, b.nbDims - 2, 1, bStrides);
  aIndex.assign(static_cast<size_t>(count), 0);
  bIndex.assign(static_cast<size_t>(count), 0);
  for (int64_t t = 0; t < count; ++t)
    ops::matrix_multiply::batchOffsets(t, batch, out.d, aStrides, bStrides,
                                       &aIndex[static_cast<size_t>(t)],
                                       &bIndex[static_cast<size_t>(t)]);
}

int64_t matrixCount(const Dims& x) {
  int64_t c = 1;
  for (int32_t i = 0; i + 2 < x.nbDims; ++i) c *= x.d[i];
  return c;
}

ProductPlan planMatmul(const KernelConfig& config, const MatrixMultiplyParams& p) {
  const Dims& a = config.inputs[0].dims;
  const Dims& b = config.inputs[1].dims;
  const Dims& y = config.outputs[0].dims;
  ProductPlan plan;
  plan.transA = p.transposeA;
  plan.transB = p.transposeB;
  plan.m = y.d[y.nbDims - 2];
  plan.n = y.d[y.nbDims - 1];
  plan.k = p.transposeA ? a.d[a.nbDims - 2] : a.d[a.nbDims - 1];
  plan.lda = a.d[a.nbDims - 1];
  plan.ldb = b.d[b.nbDims - 1];
  plan.aMatrices = matrixCount(a);
  plan.bMatrices = matrixCount(b);
  broadcastIndex(y, a, b, plan.aIndex, plan.bIndex);
  // One shared B and a stack of untransposed A matrices, one per output: the stack is one tall
  // [batch*m, k] matrix, and a single large product beats many small ones.
  const int64_t products = static_cast<int64_t>(plan.aIndex.size());
  if (plan.bMatrices == 1 && !plan.transA && plan.aMatrices == products && products > 1) {
    plan.m *= products;
    plan.aMatrices = 1;
    plan.aIndex.assign(1, 0);
    plan.bIndex.assign(1, 0);
  }
  return plan;
}

// Plain loops with double accumulation; op(A), op(B) as on CUDA (matrix_multiply_semantics.h).
Status matmulReference(const ProductPlan& q, const void* const* inputs, void* const* outputs) {
  const auto* a = static_cast<const float*>(inputs[0]);
  const auto* b = static_cast<const float*>(inputs[1]);
  auto* y = static_cast<float*>(outputs[0]);
  for (size_t t = 0; t < q.aIndex.size(); ++t) {
    const float* at = a + q.aIndex[t] * q.m * q.k;
    const float* bt = b + q.bIndex[t] * q.k * q.n;
    float* yt = y + static_cast<int64_t>(t) * q.m * q.n;
    for (int64_t i = 0; i < q.m; ++i)
      for (int64_t j = 0; j < q.n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < q.k; ++p) {
          const float av = ops::matrix_multiply::elementA(at, q.transA, q.lda, i, p);
          const float bv = ops::matrix_multiply::elementB(bt, q.transB, q.ldb, p, j);
          sum += static_cast<double>(av) * bv;
        }
        yt[i * q.n + j] = static_cast<float>(sum);
      }
  }
  return Status::ok();
}

// One sgemm per product; constant operands are packed once, per stored matrix.
class MatmulSgemm final : public Kernel {
 public:
  MatmulSgemm(ProductPlan plan, const void* constA, const void* constB) : plan_(std::move(plan)) {
    const ProductPlan& q = plan_;
    if (constA)
      for (int64_t i = 0; i < q.aMatrices; ++i)
        packedA_.push_back(PackedMatrix::packA(
            q.m, q.k, {static_cast<const float*>(constA) + i * q.m * q.k, q.lda, q.transA}));
    if (constB)
      for (int64_t i = 0; i < q.bMatrices; ++i)
        packedB_.push_back(PackedMatrix::packB(
            q.k, q.n, {static_cast<const float*>(constB) + i * q.k * q.n, q.ldb, q.transB}));
    // Products too small for sgemm to split (attention's per-head ones) go to the CPU backend's
    // threads whole, one sgemm workspace per thread, when there is enough work in all. Each
    // product is computed the same way on any thread: results do not depend on the threads.
    const int64_t products = static_cast<int64_t>(q.aIndex.size());
    if (products > 1 && sgemmThreads(q.m, q.n, q.k) == 1 &&
        sgemmThreads(q.m * products, q.n, q.k) > 1)
      slots_ = static_cast<int>(std::min<int64_t>(cpuThreadCount(), products));
    slotBytes_ = (sgemmWorkspaceSize(q.m, q.n, q.k) + 63) / 64 * 64;
  }

  size_t workspaceSize() const override { return slotBytes_ * static_cast<size_t>(slots_); }

  Status run(const void* const* inputs, void* const* outputs, void* workspace) const override {
    const auto* a = static_cast<const float*>(inputs[0]);
    const auto* b = static_cast<const float*>(inputs[1]);
    auto* y = static_cast<float*>(outputs[0]);
    const ProductPlan& q = plan_;
    parallelFor(static_cast<int64_t>(q.aIndex.size()), slots_, [&](int64_t t, int slot) {
      GemmOperand ga, gb;
      const int64_t ia = q.aIndex[static_cast<size_t>(t)], ib = q.bIndex[static_cast<size_t>(t)];
      if (!packedA_.empty()) {
        ga.packed = &packedA_[static_cast<size_t>(ia)];
      } else {
        ga.raw = {a + ia * q.m * q.k, q.lda, q.transA};
      }
      if (!packedB_.empty()) {
        gb.packed = &packedB_[static_cast<size_t>(ib)];
      } else {
        gb.raw = {b + ib * q.k * q.n, q.ldb, q.transB};
      }
      sgemm(q.m, q.n, q.k, 1.f, ga, gb, 0.f, y + t * q.m * q.n, q.n,
            static_cast<char*>(workspace) + static_cast<size_t>(slot) * slotBytes_);
    });
    return Status::ok();
  }

 private:
  ProductPlan plan_;
  std::vector<PackedMatrix> packedA_, packedB_;
  int slots_ = 1;
  size_t slotBytes_ = 0;
};

KernelPtr createMatmulSgemm(const KernelConfig& config, std::string* whyNot) {
  const auto* p = validateFp32Linear<MatrixMultiplyParams>(config, "matrix multiply", "sgemm",
                                                           ops::MatrixMultiply::infer, whyNot);
  if (!p) return nullptr;
  return std::make_unique<MatmulSgemm>(planMatmul(config, *p), constantInput(config, 0),
                                       constantInput(config, 1));
}

KernelPtr createMatmulReference(const KernelConfig& config, std::string* whyNot) {
  const auto* p = validateFp32Linear<MatrixMultiplyParams>(config, "matrix multiply", "reference",
                                                           ops::MatrixMultiply::infer, whyNot);
  if (!p) return nullptr;
  return makeReferenceKernel<matmulReference>(planMatmul(config, *p));
}

constexpr Tactic kTactics[] = {{"sgemm", &createMatmulSgemm},
                               {"reference", &createMatmulReference}};

}  // namespace
}  // namespace kiln::cpu

std::span<const kiln::Tactic> kiln::ops::MatrixMultiply::cpuTactics() { return cpu::kTactics; }
