// MatrixMultiply and Gemm kernels: sgemm against the reference on random shapes (transposes,
// broadcast batch dims, alpha/beta, C broadcast, constant operands), the references against
// hand-computed cases, and declining with reasons.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>

#include "ops/compute_test_util.h"
#include "ops/op.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (i) s += ",";
    s += std::to_string(d.d[i]);
  }
  return s + "]";
}

struct Problem {
  KernelConfig config;
  std::vector<std::vector<float>> inputs;
  std::string what;
};

template <typename Params, typename Infer>
Problem makeProblem(Rng& rng, LayerType type, const Params& p, Infer infer,
                    const std::vector<Dims>& dims, const std::vector<bool>& constant) {
  Problem pr;
  pr.config.type = type;
  pr.config.params = p;
  std::vector<TensorShape> in;
  for (size_t i = 0; i < dims.size(); ++i) {
    in.push_back({dims[i], DataType::kFLOAT});
    pr.config.inputs.push_back(fp32(dims[i]));
    pr.inputs.push_back(rng.values(count(dims[i])));
    pr.what += "input " + std::to_string(i) + " " + dimsText(dims[i]) +
               (constant[i] ? " (constant) " : " ");
  }
  pr.config.constantInputs.assign(dims.size(), nullptr);
  for (size_t i = 0; i < dims.size(); ++i)
    if (constant[i]) pr.config.constantInputs[i] = pr.inputs[i].data();
  std::vector<TensorShape> out;
  Status s = infer(p, in, out);
  EXPECT_TRUE(s.isOk()) << pr.what << s.message();
  if (s.isOk()) pr.config.outputs.push_back(fp32(out[0].dims));
  return pr;
}

void expectSgemmMatchesReference(std::span<const Tactic> list, const Problem& pr,
                                 int64_t reduction) {
  SCOPED_TRACE(pr.what);
  ASSERT_EQ(pr.config.outputs.size(), 1u);
  const Tactic& ref = *tacticNamed(list, "reference");
  std::string why;
  KernelPtr k = tacticNamed(list, "sgemm")->create(pr.config, &why);
  ASSERT_TRUE(k) << "sgemm declined: " << why;
  const std::vector<float> want = runTactic(ref, pr.config, pr.inputs);
  // The size of the terms: the reference on absolute inputs (and absolute alpha and beta).
  KernelConfig absConfig = pr.config;
  if (auto* g = std::get_if<GemmParams>(&absConfig.params)) {
    g->alpha = std::fabs(g->alpha);
    g->beta = std::fabs(g->beta);
  }
  const std::vector<float> magnitude = runTactic(ref, absConfig, absolute(pr.inputs));
  const std::vector<float> got = runKernel(*k, pr.config, pr.inputs);
  expectClose(got, want, magnitude, std::max(1e-5, 2.4e-7 * static_cast<double>(reduction)),
              "sgemm");
  const std::vector<float> again = runKernel(*k, pr.config, pr.inputs);
  EXPECT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(float)))
      << "sgemm is not deterministic from call to call";
}

// Random batch dims for two operands that broadcast: each leading dim of one may be 1 or absent.
void randomBatch(Rng& rng, Dims* a, Dims* b) {
  const int32_t rank = static_cast<int32_t>(rng.uniform(0, 3));
  const int32_t rankA = static_cast<int32_t>(rng.uniform(0, rank));
  const int32_t rankB = rng.coin() ? rank : static_cast<int32_t>(rng.uniform(0, rank));
  a->nbDims = b->nbDims = 0;
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t d = rng.uniform(1, 3);
    if (i >= rank - rankA) a->d[a->nbDims++] = rng.uniform(0, 2) == 0 ? 1 : d;
    if (i >= rank - rankB) b->d[b->nbDims++] = rng.uniform(0, 2) == 0 ? 1 : d;
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
    const int64_t m = rng.uniform(1, 20), n = rng.uniform(1, 40), k = rng.uniform(1, 30);
    Dims a, b;
    randomBatch(rng, &a, &b);
    if (rng.uniform(0, 3) == 0) b.nbDims = 0;  // a shared right operand (weights)
    appendMatrix(&a, p.transposeA ? k : m, p.transposeA ? m : k);
    appendMatrix(&b, p.transposeB ? n : k, p.transposeB ? k : n);
    SCOPED_TRACE("transA " + std::to_string(p.transposeA) + " transB " +
                 std::to_string(p.transposeB));
    expectSgemmMatchesReference(
        ops::MatrixMultiply::cpuTactics(),
        makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer, {a, b},
                    {rng.uniform(0, 3) == 0, rng.coin()}),
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
        makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer, {a, b},
                    {rng.coin(), rng.coin()}),
        s.k);
  }
  // Batched activations times shared weights: the products fold into one tall matrix.
  p = {};
  expectSgemmMatchesReference(
      ops::MatrixMultiply::cpuTactics(),
      makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                  {makeDims({3, 5, 30, 20}), makeDims({20, 33})}, {false, true}),
      20);
}

TEST(MatrixMultiplyKernels, ReferenceHandCases) {
  Rng rng;
  MatrixMultiplyParams p;
  Problem pr = makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                           {makeDims({2, 3}), makeDims({3, 2})}, {false, false});
  pr.inputs = {{1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12}};
  const Tactic& ref = *tacticNamed(ops::MatrixMultiply::cpuTactics(), "reference");
  expectNear(runTactic(ref, pr.config, pr.inputs), {58, 64, 139, 154});

  // Batch of two 1x2 A matrices against one B given transposed ([1,2] -> B = [[5],[6]]).
  p.transposeB = true;
  pr = makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                   {makeDims({2, 1, 2}), makeDims({1, 1, 2})}, {false, false});
  pr.inputs = {{1, 2, 3, 4}, {5, 6}};
  expectNear(runTactic(ref, pr.config, pr.inputs), {17, 39});

  // A transposed, B broadcast over A's batch of one: [1,2,2]^T x [2,2,1].
  p = {};
  p.transposeA = true;
  pr = makeProblem(rng, LayerType::kMATRIX_MULTIPLY, p, ops::MatrixMultiply::infer,
                   {makeDims({1, 2, 2}), makeDims({2, 2, 1})}, {false, false});
  pr.inputs = {{1, 2, 3, 4}, {1, 1, 1, -1}};
  // op(A) = [[1,3],[2,4]]; times [1,1] -> [4,6]; times [1,-1] -> [-2,-2].
  expectNear(runTactic(ref, pr.config, pr.inputs), {4, 6, -2, -2});
}

TEST(GemmKernels, SgemmMatchesReferenceOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 150; ++i) {
    GemmParams p;
    p.transposeA = rng.coin();
    p.transposeB = rng.coin();
    p.alpha = rng.coin() ? 1.f : rng.real(-2.f, 2.f);
    const int choice = static_cast<int>(rng.uniform(0, 3));
    p.beta = choice == 0 ? 0.f : choice == 1 ? 1.f : rng.real(-2.f, 2.f);
    const int64_t m = rng.uniform(1, 90), n = rng.uniform(1, 40), k = rng.uniform(1, 300);
    std::vector<Dims> dims = {
        p.transposeA ? makeDims({k, m}) : makeDims({m, k}),
        p.transposeB ? makeDims({n, k}) : makeDims({k, n}),
    };
    const int cRank = static_cast<int>(rng.uniform(-1, 2));  // -1: no C
    if (cRank == 0) dims.push_back(makeDims({}));
    if (cRank == 1) dims.push_back(makeDims({rng.coin() ? n : 1}));
    if (cRank == 2) dims.push_back(makeDims({rng.coin() ? m : 1, rng.coin() ? n : 1}));
    char buf[96];
    std::snprintf(buf, sizeof buf, "alpha %g beta %g transA %d transB %d", p.alpha, p.beta,
                  p.transposeA, p.transposeB);
    SCOPED_TRACE(buf);
    std::vector<bool> constant = {rng.uniform(0, 3) == 0, rng.coin(), false};
    constant.resize(dims.size());
    expectSgemmMatchesReference(
        ops::Gemm::cpuTactics(),
        makeProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer, dims, constant), k);
    if (HasFailure()) return;
  }
}

TEST(GemmKernels, ReferenceHandCase) {
  Rng rng;
  GemmParams p;
  p.alpha = 2.f;
  p.beta = 0.5f;
  p.transposeA = true;
  Problem pr =
      makeProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer,
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
  Problem pr =
      makeProblem(rng, LayerType::kGEMM, p, ops::Gemm::infer,
                  {makeDims({1, 1}), makeDims({1, 2}), makeDims({1, 2})}, {false, false, false});
  pr.inputs = {{2}, {3, 4}, {1, std::numeric_limits<float>::infinity()}};
  for (const Tactic& t : ops::Gemm::cpuTactics()) {
    const std::vector<float> y = runTactic(t, pr.config, pr.inputs);
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(y[0], 6.f) << t.name;
    EXPECT_TRUE(std::isnan(y[1])) << t.name;
  }
}

TEST(MatrixKernels, TacticsDeclineWithReasons) {
  Rng rng;
  const Problem mm =
      makeProblem(rng, LayerType::kMATRIX_MULTIPLY, MatrixMultiplyParams{},
                  ops::MatrixMultiply::infer, {makeDims({2, 3}), makeDims({3, 4})}, {false, false});
  const Problem gemm = makeProblem(rng, LayerType::kGEMM, GemmParams{}, ops::Gemm::infer,
                                   {makeDims({2, 3}), makeDims({3, 4})}, {false, false});
  for (auto [list, good] : {std::pair{ops::MatrixMultiply::cpuTactics(), &mm},
                            std::pair{ops::Gemm::cpuTactics(), &gemm}}) {
    ASSERT_EQ(list.size(), 2u);
    EXPECT_STREQ(list[0].name, "sgemm");
    EXPECT_STREQ(list[1].name, "reference");
    for (const Tactic& t : list) {
      SCOPED_TRACE(t.name);
      std::string why;
      KernelConfig c = good->config;
      c.inputs[1].type = DataType::kHALF;
      EXPECT_FALSE(t.create(c, &why));
      EXPECT_NE(why.find("fp16"), std::string::npos) << why;
      c = good->config;
      c.outputs[0].type = DataType::kINT32;
      why.clear();
      EXPECT_FALSE(t.create(c, &why));
      EXPECT_NE(why.find("output 0"), std::string::npos) << why;
      c = good->config;
      c.inputs[1].dims.d[0] = 4;  // inner dims now disagree
      why.clear();
      EXPECT_FALSE(t.create(c, &why));
      EXPECT_NE(why.find("inner"), std::string::npos) << why;
      c = good->config;
      c.outputs[0].dims.d[1] = 40;
      why.clear();
      EXPECT_FALSE(t.create(c, &why));
      EXPECT_FALSE(why.empty());
    }
  }
}

}  // namespace
}  // namespace kiln::testing
