// Linear (src/ops/linear/): the shape and type rules and their errors; the CPU reference against
// the definition written out here (the product in double, then the Activation layer's own
// kernel); sgemm against the reference on random problems (odd M, N and K, batch dims, with and
// without bias, residual and activation, W transposed or not, constant or not) and bit for bit
// against the unfused layers' kernels; special values; an empty reduction; the same bits on any
// thread count; declining with reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

constexpr LayerType kLN = LayerType::kLINEAR;
constexpr float kInf = std::numeric_limits<float>::infinity();

LinearParams params(bool transposeW = false, bool bias = false, bool residual = false) {
  LinearParams p;
  p.transposeW = transposeW;
  p.hasBias = bias;
  p.hasResidual = residual;
  return p;
}

LinearParams withActivation(LinearParams p, ActivationType t, float alpha = 0.f, float beta = 0.f) {
  p.hasActivation = true;
  p.activation = t;
  p.activationAlpha = alpha;
  p.activationBeta = beta;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Shape and type rules

TEST(Linear, ShapeRuleKeepsXsLeadingDims) {
  EXPECT_EQ(inferLayerOk(kLN, params(), {f32({2, 3, 5, 7}), f32({7, 4})}).dims,
            makeDims({2, 3, 5, 4}));
  EXPECT_EQ(inferLayerOk(kLN, params(true, true), {f32({5, 7}), f32({4, 7}), f32({4})}).dims,
            makeDims({5, 4}));
  EXPECT_EQ(inferLayerOk(kLN, params(false, true, true),
                         {f32({3, 5, 7}), f32({7, 4}), f32({4}), f32({3, 5, 4})})
                .dims,
            makeDims({3, 5, 4}));
  EXPECT_EQ(
      inferLayerOk(kLN, params(false, false, true), {f32({5, 7}), f32({7, 4}), f32({5, 4})}).dims,
      makeDims({5, 4}));
  const TensorShape h =
      inferLayerOk(kLN, withActivation(params(false, true), ActivationType::kGELU),
                   {typed({3, 4}, DataType::kHALF), typed({4, 6}, DataType::kHALF),
                    typed({6}, DataType::kHALF)});
  EXPECT_EQ(h.type, DataType::kHALF);
  EXPECT_EQ(h.dims, makeDims({3, 6}));
}

TEST(Linear, ShapeRuleSaysWhichInputAndDim) {
  EXPECT_MENTIONS(inferLayerError(kLN, params(), {f32({5, 7}), f32({6, 4})}),
                  "inner dims differ: X (input 0) [5,7] has K = 7 but W (input 1) [6,4] ([K, N]) "
                  "has K = 6");
  EXPECT_MENTIONS(inferLayerError(kLN, params(true), {f32({5, 7}), f32({7, 4})}),
                  "([N, K], transposed) has K = 4");
  EXPECT_MENTIONS(inferLayerError(kLN, params(), {f32({5, 7}), f32({1, 7, 4})}),
                  "W (input 1) is [1,7,4]; it must be rank 2");
  EXPECT_MENTIONS(inferLayerError(kLN, params(), {f32({7}), f32({7, 4})}),
                  "X (input 0) is [7]; it needs rank >= 2");
  EXPECT_MENTIONS(inferLayerError(kLN, params(false, true), {f32({5, 7}), f32({7, 4}), f32({5})}),
                  "bias (input 2) is [5], expected [4]");
  EXPECT_MENTIONS(
      inferLayerError(kLN, params(false, true), {f32({5, 7}), f32({7, 4}), f32({1, 4})}),
      "bias (input 2) is [1,4], expected [4]");
  EXPECT_MENTIONS(
      inferLayerError(kLN, params(false, false, true), {f32({5, 7}), f32({7, 4}), f32({1, 4})}),
      "residual (input 2) is [1,4] but the output is [5,4]");
  EXPECT_MENTIONS(inferLayerError(kLN, params(false, true, true),
                                  {f32({5, 7}), f32({7, 4}), f32({4}), f32({4, 5})}),
                  "residual (input 3) is [4,5]");
  EXPECT_MENTIONS(inferLayerError(kLN, params(false, true), {f32({5, 7}), f32({7, 4})}),
                  "expects 3 inputs (X, W, bias) for its parameters, got 2");
  EXPECT_MENTIONS(inferLayerError(kLN, params(), {f32({5, 7}), f32({7, 4}), f32({4})}),
                  "expects 2 inputs (X, W) for its parameters, got 3");
  EXPECT_MENTIONS(inferLayerError(kLN, params(), {f32({5, 7}), typed({7, 4}, DataType::kHALF)}),
                  "all inputs must have one type");
  EXPECT_MENTIONS(
      inferLayerError(kLN, params(),
                      {typed({5, 7}, DataType::kINT32), typed({7, 4}, DataType::kINT32)}),
      "int32");
  EXPECT_MENTIONS(inferLayerError(kLN, withActivation(params(), ActivationType::kNOT),
                                  {f32({5, 7}), f32({7, 4})}),
                  "float form");
  EXPECT_MENTIONS(inferLayerError(kLN, withActivation(params(), static_cast<ActivationType>(99)),
                                  {f32({5, 7}), f32({7, 4})}),
                  "unknown activation type 99");
}

TEST(Linear, ComputesInFp32) {
  std::vector<DataType> types = {DataType::kHALF, DataType::kHALF};
  std::string why;
  ASSERT_TRUE(ops::Linear::computeTypes(params(), types, why)) << why;
  EXPECT_EQ(types, std::vector<DataType>({DataType::kFLOAT, DataType::kFLOAT}));
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

// A random Linear problem: [batch..., m, k] x W, optional bias and residual, W constant or not.
MatrixProblem linearProblem(Rng& rng, const LinearParams& p, const Dims& x, int64_t n,
                            bool constantW) {
  const int64_t k = x.d[x.nbDims - 1];
  std::vector<Dims> dims = {x, p.transposeW ? makeDims({n, k}) : makeDims({k, n})};
  std::vector<bool> constant = {false, constantW};
  if (p.hasBias) {
    dims.push_back(makeDims({n}));
    constant.push_back(true);
  }
  if (p.hasResidual) {
    Dims y = x;
    y.d[y.nbDims - 1] = n;
    dims.push_back(y);
    constant.push_back(false);
  }
  return makeMatrixProblem(rng, kLN, p, ops::Linear::infer, dims, constant);
}

Dims randomX(Rng& rng, int64_t m, int64_t k) {
  Dims x;
  x.nbDims = static_cast<int32_t>(rng.uniformInt(0, 2));
  for (int32_t i = 0; i < x.nbDims; ++i) x.d[i] = rng.uniformInt(1, 3);
  x.d[x.nbDims++] = m;
  x.d[x.nbDims++] = k;
  return x;
}

// The activations these tests run: every one whose slope stays within 1.5, so that an error in
// the sum grows at most that much through it.
std::vector<LinearParams> withEachActivation(const LinearParams& p) {
  using A = ActivationType;
  return {p,
          withActivation(p, A::kRELU),
          withActivation(p, A::kLEAKY_RELU, 0.1f),
          withActivation(p, A::kCLIP, 0.f, 6.f),
          withActivation(p, A::kGELU),
          withActivation(p, A::kGELU_TANH),
          withActivation(p, A::kSIGMOID),
          withActivation(p, A::kTANH),
          withActivation(p, A::kHARD_SWISH),
          withActivation(p, A::kELU, 1.f),
          withActivation(p, A::kMISH)};
}

// The definition written out: the product, bias and residual summed in double and rounded to
// fp32, then the Activation layer's own CPU kernel.
std::vector<float> definition(const MatrixProblem& pr) {
  const auto& p = std::get<LinearParams>(pr.config.params);
  const Dims& xd = pr.config.inputs[0].dims;
  const int64_t k = xd.d[xd.nbDims - 1];
  const Dims& yd = pr.config.outputs[0].dims;
  const int64_t n = yd.d[yd.nbDims - 1], rows = count(yd) / n;
  const auto& x = pr.inputs[0];
  const auto& w = pr.inputs[1];
  std::vector<float> y(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += static_cast<double>(x[r * k + q]) * (p.transposeW ? w[j * k + q] : w[q * n + j]);
      if (p.hasBias) s += pr.inputs[2][j];
      if (p.hasResidual) s += pr.inputs[p.hasBias ? 3 : 2][r * n + j];
      y[r * n + j] = static_cast<float>(s);
    }
  if (!p.hasActivation) return y;
  return runActivation(act(p.activation, p.activationAlpha, p.activationBeta), y);
}

// The reference on absolute inputs without the activation: the size of the terms of each sum.
std::vector<float> magnitude(const MatrixProblem& pr) {
  KernelConfig c = pr.config;
  std::get<LinearParams>(c.params).hasActivation = false;
  return runTactic(*findTactic(ops::Linear::cpuTactics(), "reference"), c, absolute(pr.inputs));
}

TEST(LinearKernels, ReferenceIsTheDefinition) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 40; ++i) {
    const bool t = rng.coin(), b = rng.coin(), res = rng.coin();
    const int64_t m = rng.uniformInt(1, 9), n = rng.uniformInt(1, 11), k = rng.uniformInt(1, 13);
    for (const LinearParams& p : withEachActivation(params(t, b, res))) {
      const MatrixProblem pr = linearProblem(rng, p, randomX(rng, m, k), n, rng.coin());
      SCOPED_TRACE(pr.what + "activation " + std::to_string(p.hasActivation) + "/" +
                   std::to_string(static_cast<int>(p.activation)));
      const auto got =
          runTactic(*findTactic(ops::Linear::cpuTactics(), "reference"), pr.config, pr.inputs);
      const auto want = definition(pr);
      ASSERT_EQ(got.size(), want.size());
      for (size_t e = 0; e < got.size(); ++e)
        ASSERT_TRUE(sameFloat(got[e], want[e]))
            << "element " << e << ": " << got[e] << " vs " << want[e];
    }
  }
}

TEST(LinearKernels, SgemmMatchesReferenceOnRandomProblems) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 30; ++i) {
    const bool t = rng.coin(), b = rng.coin(), res = rng.coin();
    // Odd sizes, and some past sgemm's blocks (m > 72, k > 256).
    const bool large = i % 5 == 0;
    const int64_t m = large ? rng.uniformInt(70, 150) : rng.uniformInt(1, 19);
    const int64_t n = rng.uniformInt(1, 41),
                  k = large ? rng.uniformInt(250, 300) : rng.uniformInt(1, 33);
    for (const LinearParams& p : withEachActivation(params(t, b, res))) {
      const MatrixProblem pr = linearProblem(rng, p, randomX(rng, m, k), n, rng.coin());
      SCOPED_TRACE(pr.what + "activation " + std::to_string(p.hasActivation) + "/" +
                   std::to_string(static_cast<int>(p.activation)));
      const auto want =
          runTactic(*findTactic(ops::Linear::cpuTactics(), "reference"), pr.config, pr.inputs);
      const auto got =
          runTactic(*findTactic(ops::Linear::cpuTactics(), "sgemm"), pr.config, pr.inputs);
      expectClose(got, want, magnitude(pr), 1.5 * std::max(1e-5, 2.4e-7 * static_cast<double>(k)),
                  "sgemm");
      if (HasFailure()) return;
    }
  }
}

// The sgemm tactic does what the unfused layers do, in their order: matrix multiply's sgemm
// kernel, the bias and residual added in fp32, then the Activation layer's kernel.
TEST(LinearKernels, SgemmGivesTheUnfusedLayersBits) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (const LinearParams& p : withEachActivation(params(rng.coin(), true, true))) {
    const MatrixProblem pr = linearProblem(rng, p, makeDims({3, 17, 45}), 29, true);
    MatrixMultiplyParams mp;
    mp.transposeB = p.transposeW;
    KernelConfig mm = config(LayerType::kMATRIX_MULTIPLY, mp,
                             {pr.config.inputs[0], pr.config.inputs[1]}, pr.config.outputs);
    mm.constantInputs = {nullptr, pr.inputs[1].data()};
    std::vector<float> y = runTactic(*findTactic(ops::MatrixMultiply::cpuTactics(), "sgemm"), mm,
                                     {pr.inputs[0], pr.inputs[1]});
    for (size_t e = 0; e < y.size(); ++e) {
      y[e] += pr.inputs[2][e % 29];
      y[e] += pr.inputs[3][e];
    }
    const std::vector<float> before = y;  // the activation's input
    if (p.hasActivation)
      y = runActivation(act(p.activation, p.activationAlpha, p.activationBeta), y);
    const auto got =
        runTactic(*findTactic(ops::Linear::cpuTactics(), "sgemm"), pr.config, pr.inputs);
    ASSERT_EQ(got.size(), y.size());
    if (p.hasActivation && p.activation == ActivationType::kGELU) {
      // The fused erf GELU is the vectorized form (gelu_row.h): a few ulp from erff's, whose
      // 1 + erf cancels in the negative tail (an ulp of 1, times x / 2).
      for (size_t e = 0; e < y.size(); ++e)
        EXPECT_NEAR(got[e], y[e], 6e-7f * std::fabs(y[e]) + 6e-8f * std::fabs(before[e]))
            << "element " << e;
      continue;
    }
    EXPECT_EQ(0, std::memcmp(got.data(), y.data(), y.size() * sizeof(float)))
        << "activation " << static_cast<int>(p.activation);
  }
}

// NaN in a row of X, an infinite bias, an infinite residual: each tactic gives what the
// arithmetic gives (NaN through ReLU, as the Activation layer's).
TEST(LinearKernels, SpecialValues) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (const char* tactic : {"sgemm", "reference"}) {
    SCOPED_TRACE(tactic);
    const LinearParams p = withActivation(params(false, true, true), ActivationType::kRELU);
    MatrixProblem pr = linearProblem(rng, p, makeDims({4, 6}), 5, true);
    pr.inputs[0][1 * 6 + 2] = std::nanf("");  // row 1
    pr.inputs[2][3] = kInf;                   // column 3
    pr.inputs[3][2 * 5 + 3] = -kInf;          // inf - inf at (2, 3)
    pr.inputs[3][3 * 5 + 0] = -kInf;          // relu(-inf) at (3, 0)
    pr.config.constantInputs[1] = pr.inputs[1].data();
    const auto y = runTactic(*findTactic(ops::Linear::cpuTactics(), tactic), pr.config, pr.inputs);
    ASSERT_EQ(y.size(), 20u);
    for (int64_t j = 0; j < 5; ++j) EXPECT_TRUE(std::isnan(y[5 + j])) << "row 1, column " << j;
    EXPECT_EQ(y[0 * 5 + 3], kInf);
    EXPECT_TRUE(std::isnan(y[2 * 5 + 3]));
    EXPECT_EQ(y[3 * 5 + 0], 0.f);
    EXPECT_EQ(y[3 * 5 + 3], kInf);
    const auto sigmoid = withActivation(params(false, true), ActivationType::kSIGMOID);
    MatrixProblem ps = linearProblem(rng, sigmoid, makeDims({2, 3}), 2, false);
    ps.inputs[2] = {kInf, -kInf};
    EXPECT_EQ(runTactic(*findTactic(ops::Linear::cpuTactics(), tactic), ps.config, ps.inputs),
              std::vector<float>({1.f, 0.f, 1.f, 0.f}));
  }
}

// K = 0: the product is an empty sum, so Y is the activation of bias + residual.
TEST(LinearKernels, EmptyReduction) {
  Rng rng;
  const LinearParams p = withActivation(params(true, true, true), ActivationType::kRELU);
  const MatrixProblem pr = linearProblem(rng, p, makeDims({3, 0}), 4, rng.coin());
  std::vector<float> want(12);
  for (size_t e = 0; e < want.size(); ++e)
    want[e] = std::max(0.f, pr.inputs[2][e % 4] + pr.inputs[3][e]);
  for (const char* tactic : {"sgemm", "reference"})
    EXPECT_EQ(runTactic(*findTactic(ops::Linear::cpuTactics(), tactic), pr.config, pr.inputs), want)
        << tactic;
}

// The epilogue is split over the CPU backend's threads on large outputs: the bits must not depend
// on how many.
TEST(LinearKernels, SgemmGivesTheSameBitsOnAnyThreadCount) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const LinearParams p = withActivation(params(true, true, true), ActivationType::kGELU);
  const MatrixProblem pr = linearProblem(rng, p, makeDims({2, 197, 96}), 384, true);
  const Tactic& sgemm = *findTactic(ops::Linear::cpuTactics(), "sgemm");
  std::vector<float> one;
  {
    cpu::ScopedThreadLimit limit(1);
    one = runTactic(sgemm, pr.config, pr.inputs);
  }
  const std::vector<float> all = runTactic(sgemm, pr.config, pr.inputs);
  ASSERT_EQ(one.size(), all.size());
  EXPECT_EQ(0, std::memcmp(one.data(), all.data(), one.size() * sizeof(float)));
}

TEST(LinearKernels, TacticsDeclineWithReasons) {
  Rng rng;
  const MatrixProblem good = linearProblem(rng, params(), makeDims({2, 3}), 4, false);
  expectMatrixTacticsDeclineWithReasons(ops::Linear::cpuTactics(), good);
  for (const Tactic& t : ops::Linear::cpuTactics()) {
    KernelConfig c = good.config;
    c.params = MatrixMultiplyParams{};
    EXPECT_MENTIONS(declines(t, c), "not a linear configuration");
  }
}

}  // namespace
}  // namespace kiln::testing
