// Gemm: its shape rule (transposes, C broadcast, errors) and its CPU tactics: sgemm against the
// reference on random shapes (alpha/beta, C broadcast, constant operands), the reference against
// a hand-computed case, beta 0 with an infinite C, and declining with reasons.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferGemm, ShapesAndCBroadcast) {
  GemmParams p;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  p.transposeA = p.transposeB = true;
  for (auto c : {f32({}), f32({1}), f32({4}), f32({1, 4}), f32({2, 1}), f32({2, 4})}) {
    ASSERT_TRUE(ops::Gemm::infer(p, {f32({3, 2}), f32({4, 3}), c}, out).isOk());
    EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  }
}

TEST(InferGemm, Errors) {
  GemmParams p;
  std::vector<TensorShape> out;
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({2, 4})}, out), "inner");
  expectError(ops::Gemm::infer(p, {f32({1, 2, 3}), f32({3, 4})}, out), "rank 2");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3})}, out), "rank 2");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({3})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({4, 2})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3}), f32({3, 4}), f32({1, 2, 4})}, out), "broadcast");
  expectError(ops::Gemm::infer(p, {f32({2, 3})}, out), "2 or 3 inputs");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(GemmKernels, SgemmMatchesReferenceOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 150; ++i) {
    GemmParams p;
    p.transposeA = rng.coin();
    p.transposeB = rng.coin();
    p.alpha = rng.coin() ? 1.f : rng.uniformFloat(-2.f, 2.f);
    const int choice = static_cast<int>(rng.uniformInt(0, 3));
    p.beta = choice == 0 ? 0.f : choice == 1 ? 1.f : rng.uniformFloat(-2.f, 2.f);
    const int64_t m = rng.uniformInt(1, 90), n = rng.uniformInt(1, 40), k = rng.uniformInt(1, 300);
    std::vector<Dims> dims = {
        p.transposeA ? makeDims({k, m}) : makeDims({m, k}),
        p.transposeB ? makeDims({n, k}) : makeDims({k, n}),
    };
    const int cRank = static_cast<int>(rng.uniformInt(-1, 2));  // -1: no C
    if (cRank == 0) dims.push_back(makeDims({}));
    if (cRank == 1) dims.push_back(makeDims({rng.coin() ? n : 1}));
    if (cRank == 2) dims.push_back(makeDims({rng.coin() ? m : 1, rng.coin() ? n : 1}));
    char buf[96];
    std::snprintf(buf, sizeof buf, "alpha %g beta %g transA %d transB %d", p.alpha, p.beta,
                  p.transposeA, p.transposeB);
    SCOPED_TRACE(buf);
    std::vector<bool> constant = {rng.uniformInt(0, 3) == 0, rng.coin(), false};
    constant.resize(dims.size());
    expectSgemmMatchesReference(
        ops::Gemm::cpuTactics(),
        makeMatrixProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer, dims, constant), k);
    if (HasFailure()) return;
  }
}

TEST(GemmKernels, ReferenceHandCase) {
  Rng rng;
  GemmParams p;
  p.alpha = 2.f;
  p.beta = 0.5f;
  p.transposeA = true;
  MatrixProblem pr =
      makeMatrixProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer,
                        {makeDims({2, 2}), makeDims({2, 2}), makeDims({2})}, {false, false, false});
  pr.inputs = {{1, 2, 3, 4}, {1, 0, 0, 1}, {10, 20}};
  for (const Tactic& t : ops::Gemm::cpuTactics())
    expectNear(runTactic(t, pr.config, pr.inputs), {7, 16, 9, 18});
}

// ONNX: Y = alpha A B + beta C, so beta 0 times an infinite C is NaN, as in numpy.
TEST(GemmKernels, BetaZeroStillMultipliesC) {
  Rng rng;
  GemmParams p;
  p.beta = 0.f;
  MatrixProblem pr = makeMatrixProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer,
                                       {makeDims({1, 1}), makeDims({1, 2}), makeDims({1, 2})},
                                       {false, false, false});
  pr.inputs = {{2}, {3, 4}, {1, std::numeric_limits<float>::infinity()}};
  for (const Tactic& t : ops::Gemm::cpuTactics()) {
    const std::vector<float> y = runTactic(t, pr.config, pr.inputs);
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(y[0], 6.f) << t.name;
    EXPECT_TRUE(std::isnan(y[1])) << t.name;
  }
}

TEST(MatrixKernels, GemmTacticsDeclineWithReasons) {
  Rng rng;
  const MatrixProblem good =
      makeMatrixProblem(rng, LayerType::kGEMM, GemmParams{}, ops::Gemm::infer,
                        {makeDims({2, 3}), makeDims({3, 4})}, {false, false});
  expectMatrixTacticsDeclineWithReasons(ops::Gemm::cpuTactics(), good);
}

}  // namespace
}  // namespace kiln::testing
