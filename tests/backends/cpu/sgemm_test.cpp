// kiln's sgemm on its own: strided and transposed operands, alpha/beta, packed operands (which
// must give the very same bits as unpacked ones), empty and k = 0 products.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cpu/sgemm.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using cpu::GemmOperand;
using cpu::MatrixRef;
using cpu::PackedMatrix;

// Element (r, c) of op(X) for X stored with leading dimension ld.
float at(const std::vector<float>& x, int64_t ld, bool trans, int64_t r, int64_t c) {
  return trans ? x[c * ld + r] : x[r * ld + c];
}

TEST(Sgemm, MatchesDoubleLoopsAndPackingChangesNoBits) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int iter = 0; iter < 60; ++iter) {
    const int64_t m = rng.uniformInt(1, 100), n = rng.uniformInt(1, 70), k = rng.uniformInt(1, 400);
    const bool ta = rng.coin(), tb = rng.coin();
    // Leading dims larger than needed: the operands are windows into wider matrices.
    const int64_t lda = (ta ? m : k) + rng.uniformInt(0, 3),
                  ldb = (tb ? k : n) + rng.uniformInt(0, 3);
    const int64_t ldc = n + rng.uniformInt(0, 3);
    const std::vector<float> a = rng.values((ta ? k : m) * lda);
    const std::vector<float> b = rng.values((tb ? n : k) * ldb);
    const std::vector<float> c0 = rng.values(m * ldc);
    const float alpha = rng.uniformFloat(-2.f, 2.f);
    const float beta = rng.coin() ? 0.f : rng.uniformFloat(-2.f, 2.f);
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) +
                 " ta " + std::to_string(ta) + " tb " + std::to_string(tb));

    Buffer ws(cpu::sgemmWorkspaceSize(m, n, k));
    std::vector<float> c = c0;
    if (beta == 0.f)  // beta 0 must not read C
      for (int64_t i = 0; i < m; ++i) c[i * ldc] = std::numeric_limits<float>::quiet_NaN();
    GemmOperand ga, gb;
    ga.raw = MatrixRef{a.data(), lda, ta};
    gb.raw = MatrixRef{b.data(), ldb, tb};
    cpu::sgemm(m, n, k, alpha, ga, gb, beta, c.data(), ldc, ws.data());

    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        if (j >= n) {  // outside the product: untouched
          ASSERT_EQ(c[i * ldc + j], c0[i * ldc + j]);
          continue;
        }
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double t = static_cast<double>(at(a, lda, ta, i, p)) * at(b, ldb, tb, p, j);
          sum += t;
          mag += std::fabs(t);
        }
        const double want = alpha * sum + beta * c0[i * ldc + j];
        const double tol = std::max(1e-5, 2.4e-7 * k) *
                               (std::fabs(alpha) * mag + std::fabs(beta * c0[i * ldc + j])) +
                           1e-6;
        ASSERT_NEAR(c[i * ldc + j], want, tol) << "at " << i << "," << j;
      }

    const PackedMatrix pa = PackedMatrix::packA(m, k, ga.raw);
    const PackedMatrix pb = PackedMatrix::packB(k, n, gb.raw);
    for (int variant = 1; variant < 4; ++variant) {
      std::vector<float> c2 = c0;
      GemmOperand a2 = ga, b2 = gb;
      if (variant & 1) a2.packed = &pa;
      if (variant & 2) b2.packed = &pb;
      cpu::sgemm(m, n, k, alpha, a2, b2, beta, c2.data(), ldc, ws.data());
      ASSERT_EQ(0, std::memcmp(c.data(), c2.data(), c.size() * sizeof(float)))
          << "packing variant " << variant << " changed the result";
    }
  }
}

TEST(Sgemm, ZeroInnerDimensionOnlyScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  GemmOperand none;
  cpu::sgemm(2, 2, 0, 1.f, none, none, 2.f, c.data(), 2, nullptr);
  EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8}));
  c[0] = std::numeric_limits<float>::quiet_NaN();
  cpu::sgemm(2, 2, 0, 1.f, none, none, 0.f, c.data(), 2, nullptr);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
  cpu::sgemm(0, 2, 5, 1.f, none, none, 0.f, nullptr, 2, nullptr);  // nothing to touch
  EXPECT_EQ(cpu::sgemmWorkspaceSize(0, 3, 3), 0u);
}

}  // namespace
}  // namespace kiln::testing
