// MatrixMultiply: its shape rule (broadcast batch dims, transposes, errors) and its CPU tactics:
// sgemm against the reference on random shapes (transposes, broadcast batch dims, constant
// operands) and across sgemm's blocks, the same bits on any thread count, the reference against
// hand-computed cases, and declining with reasons.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cpu/thread_pool.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferMatrixMultiply, BroadcastAndTransposes) {
  MatrixMultiplyParams p;
  std::vector<TensorShape> out;
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({2, 3}), f32({3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({2, 4}));
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({5, 1, 2, 3}), f32({7, 3, 4})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({5, 7, 2, 4}));
  p.transposeA = p.transposeB = true;
  ASSERT_TRUE(ops::MatrixMultiply::infer(p, {f32({6, 3, 2}), f32({4, 3})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({6, 2, 4}));
}

TEST(InferMatrixMultiply, Errors) {
  MatrixMultiplyParams p;
  std::vector<TensorShape> out;
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3}), f32({4, 4})}, out), "inner");
  expectError(ops::MatrixMultiply::infer(p, {f32({3}), f32({3, 4})}, out), "rank >= 2");
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 2, 3}), f32({3, 3, 4})}, out), "broadcast");
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3})}, out), "2 input");
  TensorShape b = f32({3, 4});
  b.type = DataType::kINT64;
  expectError(ops::MatrixMultiply::infer(p, {f32({2, 3}), b}, out), "int64");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

// Random batch dims for two operands that broadcast: each leading dim of one may be 1 or absent.
void randomBatch(Rng& rng, Dims* a, Dims* b) {
  const int32_t rank = static_cast<int32_t>(rng.uniformInt(0, 3));
  const int32_t rankA = static_cast<int32_t>(rng.uniformInt(0, rank));
  const int32_t rankB = rng.coin() ? rank : static_cast<int32_t>(rng.uniformInt(0, rank));
  a->nbDims = b->nbDims = 0;
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t d = rng.uniformInt(1, 3);
    if (i >= rank - rankA) a->d[a->nbDims++] = rng.uniformInt(0, 2) == 0 ? 1 : d;
    if (i >= rank - rankB) b->d[b->nbDims++] = rng.uniformInt(0, 2) == 0 ? 1 : d;
  }
}

void appendMatrix(Dims* d, int64_t rows, int64_t cols) {
  d->d[d->nbDims++] = rows;
  d->d[d->nbDims++] = cols;
}

TEST(MatrixMultiplyKernels, SgemmMatchesReferenceOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 150; ++i) {
    MatrixMultiplyParams p;
    p.transposeA = rng.coin();
    p.transposeB = rng.coin();
    const int64_t m = rng.uniformInt(1, 20), n = rng.uniformInt(1, 40), k = rng.uniformInt(1, 30);
    Dims a, b;
    randomBatch(rng, &a, &b);
    if (rng.uniformInt(0, 3) == 0) b.nbDims = 0;  // a shared right operand (weights)
    appendMatrix(&a, p.transposeA ? k : m, p.transposeA ? m : k);
    appendMatrix(&b, p.transposeB ? n : k, p.transposeB ? k : n);
    SCOPED_TRACE("transA " + std::to_string(p.transposeA) + " transB " +
                 std::to_string(p.transposeB));
    expectSgemmMatchesReference(
        ops::MatrixMultiply::cpuTactics(),
        makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer, {a, b},
                          {rng.uniformInt(0, 3) == 0, rng.coin()}),
        k);
    if (HasFailure()) return;
  }
}

// Sizes that cross every sgemm block: m > 72, n > 4080, k > 256, and edge tiles.
TEST(MatrixMultiplyKernels, SgemmMatchesReferenceAcrossBlocks) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  MatrixMultiplyParams p;
  const struct {
    int64_t m, n, k;
  } sizes[] = {{150, 37, 300}, {3, 4100, 5}, {73, 17, 513}, {2, 3, 600}};
  for (const auto& s : sizes) {
    p.transposeA = rng.coin();
    p.transposeB = rng.coin();
    Dims a, b;
    appendMatrix(&a, p.transposeA ? s.k : s.m, p.transposeA ? s.m : s.k);
    appendMatrix(&b, p.transposeB ? s.n : s.k, p.transposeB ? s.k : s.n);
    expectSgemmMatchesReference(
        ops::MatrixMultiply::cpuTactics(),
        makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer, {a, b},
                          {rng.coin(), rng.coin()}),
        s.k);
  }
  // Batched activations times shared weights: the products fold into one tall matrix.
  p = {};
  expectSgemmMatchesReference(
      ops::MatrixMultiply::cpuTactics(),
      makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                        {makeDims({3, 5, 30, 20}), makeDims({20, 33})}, {false, true}),
      20);
}

// Batched products too small for sgemm to split go to the CPU backend's threads whole: the bits
// must not depend on how many (ScopedThreadLimit(1) runs them all on the caller). Attention's
// per-head products at ViT-B/16's size, a constant operand (packed) and odd shapes.
TEST(MatrixMultiplyKernels, SgemmGivesTheSameBitsOnAnyThreadCount) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  MatrixMultiplyParams p;
  const std::vector<std::vector<Dims>> shapes = {
      {makeDims({12, 197, 64}), makeDims({12, 64, 197})},
      {makeDims({12, 197, 197}), makeDims({12, 197, 64})},
      {makeDims({2, 7, 33, 45}), makeDims({7, 45, 29})},
      {makeDims({300, 5, 3}), makeDims({300, 3, 7})}};
  for (const auto& dims : shapes)
    for (bool constantB : {false, true}) {
      const MatrixProblem pr =
          makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer, dims,
                            {false, constantB});
      SCOPED_TRACE(pr.what);
      const Tactic& sgemm = *findTactic(ops::MatrixMultiply::cpuTactics(), "sgemm");
      std::vector<float> one;
      {
        cpu::ScopedThreadLimit limit(1);
        one = runTactic(sgemm, pr.config, pr.inputs);
      }
      const std::vector<float> all = runTactic(sgemm, pr.config, pr.inputs);
      ASSERT_EQ(one.size(), all.size());
      EXPECT_EQ(0, std::memcmp(one.data(), all.data(), one.size() * sizeof(float)));
    }
}

TEST(MatrixMultiplyKernels, ReferenceHandCases) {
  Rng rng;
  MatrixMultiplyParams p;
  MatrixProblem pr =
      makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                        {makeDims({2, 3}), makeDims({3, 2})}, {false, false});
  pr.inputs = {{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}};
  const Tactic& ref = *findTactic(ops::MatrixMultiply::cpuTactics(), "reference");
  expectNear(runTactic(ref, pr.config, pr.inputs), {58, 64, 139, 154});

  // Batch of two 1x2 A matrices against one B given transposed ([1,2] -> B = [[5],[6]]).
  p.transposeB = true;
  pr = makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                         {makeDims({2, 1, 2}), makeDims({1, 1, 2})}, {false, false});
  pr.inputs = {{1, 2, 3, 4}, {5, 6}};
  expectNear(runTactic(ref, pr.config, pr.inputs), {17, 39});

  // A transposed, B broadcast over A's batch of one: [1,2,2]^T x [2,2,1].
  p = {};
  p.transposeA = true;
  pr = makeMatrixProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                         {makeDims({1, 2, 2}), makeDims({2, 2, 1})}, {false, false});
  pr.inputs = {{1, 2, 3, 4}, {1, 1, 1, -1}};
  // op(A) = [[1,3],[2,4]]; times [1,1] -> [4,6]; times [1,-1] -> [-2,-2].
  expectNear(runTactic(ref, pr.config, pr.inputs), {4, 6, -2, -2});
}

TEST(MatrixKernels, MatrixMultiplyTacticsDeclineWithReasons) {
  Rng rng;
  const MatrixProblem good = makeMatrixProblem(
      rng, LayerType::kMATRIX_MULTIPLY, MatrixMultiplyParams{}, ops::MatrixMultiply::infer,
      {makeDims({2, 3}), makeDims({3, 4})}, {false, false});
  expectMatrixTacticsDeclineWithReasons(ops::MatrixMultiply::cpuTactics(), good);
}

}  // namespace
}  // namespace kiln::testing
