// Convolution: its shape rule (output shape, strides, dilation, groups, errors) and its CPU
// tactics: each fast tactic against the reference on random shapes, the reference against
// hand-computed cases, declining with reasons, determinism and concurrent runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "backends/cpu/sgemm.h"
#include "ops/activation/activation_semantics.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

ConvolutionParams conv(int32_t k, int32_t kh, int32_t kw) {
  ConvolutionParams p;
  p.outChannels = k;
  p.kernelH = kh;
  p.kernelW = kw;
  return p;
}

TEST(InferConvolution, OutputShape) {
  ConvolutionParams p = conv(8, 3, 3);
  p.padTop = p.padBottom = p.padLeft = p.padRight = 1;
  std::vector<TensorShape> out;
  ASSERT_TRUE(
      ops::Convolution::infer(p, {f32({2, 4, 10, 12}), f32({8, 4, 3, 3}), f32({8})}, out).isOk());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims, makeDims({2, 8, 10, 12}));
  EXPECT_EQ(out[0].type, DataType::kFLOAT);
}

TEST(InferConvolution, StrideDilationAsymmetricPadsGroups) {
  ConvolutionParams p = conv(6, 3, 2);
  p.strideH = 2;
  p.strideW = 3;
  p.dilationH = 2;
  p.padTop = 1;
  p.padBottom = 0;
  p.padLeft = 0;
  p.padRight = 2;
  p.groups = 3;
  std::vector<TensorShape> out;
  // H: (11 + 1 - 5) / 2 + 1 = 4; W: (7 + 2 - 2) / 3 + 1 = 3.
  ASSERT_TRUE(ops::Convolution::infer(p, {f32({1, 9, 11, 7}), f32({6, 3, 3, 2})}, out).isOk());
  EXPECT_EQ(out[0].dims, makeDims({1, 6, 4, 3}));
}

TEST(InferConvolution, OutputTypeFollowsInput) {
  std::vector<TensorShape> out;
  TensorShape x = f32({1, 2, 3, 3});
  x.type = DataType::kHALF;
  ASSERT_TRUE(ops::Convolution::infer(conv(1, 1, 1), {x, f32({1, 2, 1, 1})}, out).isOk());
  EXPECT_EQ(out[0].type, DataType::kHALF);
}

TEST(InferConvolution, Errors) {
  std::vector<TensorShape> out;
  const ConvolutionParams p = conv(4, 3, 3);
  const TensorShape x = f32({1, 2, 5, 5}), w = f32({4, 2, 3, 3});
  expectError(ops::Convolution::infer(p, {x}, out), "2 to 4 inputs");
  expectError(ops::Convolution::infer(p, {f32({2, 5, 5}), w}, out), "rank 4");
  expectError(ops::Convolution::infer(p, {x, f32({4, 2, 9})}, out), "rank 4");
  expectError(ops::Convolution::infer(p, {x, f32({4, 3, 3, 3})}, out),
              "weights");  // channel mismatch
  expectError(ops::Convolution::infer(p, {x, f32({5, 2, 3, 3})}, out), "weights");  // K mismatch
  expectError(ops::Convolution::infer(p, {x, f32({4, 2, 2, 3})}, out),
              "weights");  // kernel mismatch
  expectError(ops::Convolution::infer(p, {x, w, f32({3})}, out), "bias");
  expectError(ops::Convolution::infer(p, {x, w, f32({1, 4})}, out), "bias");
  ConvolutionParams g = p;
  g.groups = 3;
  expectError(ops::Convolution::infer(g, {f32({1, 4, 5, 5}), f32({4, 1, 3, 3})}, out), "groups");
  g.outChannels = 5;
  g.groups = 2;
  expectError(ops::Convolution::infer(g, {x, f32({5, 1, 3, 3})}, out), "outChannels");
  expectError(ops::Convolution::infer(p, {f32({1, 2, 2, 5}), w}, out),
              "larger than the padded input");
  ConvolutionParams d = p;
  d.dilationW = 3;  // extent 7 > 5
  expectError(ops::Convolution::infer(d, {x, w}, out), "larger than the padded input");
  ConvolutionParams bad = p;
  bad.strideH = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "strideH");
  bad = p;
  bad.padLeft = -1;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "padding");
  bad = p;
  bad.dilationH = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "dilation");
  bad = p;
  bad.groups = 0;
  expectError(ops::Convolution::infer(bad, {x, w}, out), "groups");
  TensorShape xi = x;
  xi.type = DataType::kINT32;
  expectError(ops::Convolution::infer(p, {xi, w}, out), "int32");
  expectError(ops::Convolution::infer(p, {f32({1, 2, -5, 5}), w}, out), "negative");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

std::string describe(const ConvolutionParams& p, const Dims& x, bool bias, bool constW) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "x=[%lld,%lld,%lld,%lld] K=%d k=%dx%d stride=%d,%d pad=t%d,l%d,b%d,r%d "
                "dil=%d,%d groups=%d bias=%d constW=%d",
                static_cast<long long>(x.d[0]), static_cast<long long>(x.d[1]),
                static_cast<long long>(x.d[2]), static_cast<long long>(x.d[3]), p.outChannels,
                p.kernelH, p.kernelW, p.strideH, p.strideW, p.padTop, p.padLeft, p.padBottom,
                p.padRight, p.dilationH, p.dilationW, p.groups, bias, constW);
  return buf;
}

// A configuration plus its input data (weights as a constant when asked).
struct ConvProblem {
  KernelConfig config;
  std::vector<std::vector<float>> inputs;
  std::string what;
  int64_t reduction = 0;
};

ConvProblem makeProblem(Rng& rng, const ConvolutionParams& p, const Dims& x, bool bias,
                        bool constW) {
  ConvProblem pr;
  const Dims w = makeDims({p.outChannels, x.d[1] / p.groups, p.kernelH, p.kernelW});
  std::vector<TensorShape> in = {{x, DataType::kFLOAT}, {w, DataType::kFLOAT}};
  if (bias) in.push_back({makeDims({p.outChannels}), DataType::kFLOAT});
  std::vector<TensorShape> out;
  if (p.hasResidual) {  // the residual has the output's shape: infer it without one first
    ConvolutionParams plain = p;
    plain.hasResidual = false;
    if (ops::Convolution::infer(plain, in, out).isOk()) in.push_back(out[0]);
    out.clear();
  }
  Status s = ops::Convolution::infer(p, in, out);
  EXPECT_TRUE(s.isOk()) << s.message();
  pr.config.type = LayerType::kCONVOLUTION;
  pr.config.params = p;
  for (const TensorShape& t : in) {
    pr.config.inputs.push_back(fp32(t.dims));
    pr.inputs.push_back(rng.values(count(t.dims)));
  }
  if (s.isOk()) pr.config.outputs.push_back(fp32(out[0].dims));
  pr.config.constantInputs.assign(in.size(), nullptr);
  if (constW) pr.config.constantInputs[1] = pr.inputs[1].data();
  pr.what = describe(p, x, bias, constW) + " residual=" + std::to_string(p.hasResidual) +
            " activation=" +
            (p.hasActivation ? std::to_string(static_cast<int32_t>(p.activation)) : "none");
  pr.reduction = w.d[1] * p.kernelH * p.kernelW;
  return pr;
}

double relTol(int64_t reduction) { return std::max(1e-5, 2.4e-7 * static_cast<double>(reduction)); }

void expectMatchesReference(const char* tactic, const ConvProblem& pr) {
  SCOPED_TRACE(pr.what);
  const Tactic* fast = findTactic(ops::Convolution::cpuTactics(), tactic);
  const Tactic* ref = findTactic(ops::Convolution::cpuTactics(), "reference");
  ASSERT_TRUE(fast && ref);
  std::string why;
  KernelPtr k = fast->create(pr.config, &why);
  ASSERT_TRUE(k) << tactic << " declined: " << why;
  const std::vector<float> want = runTactic(*ref, pr.config, pr.inputs);
  const std::vector<float> magnitude = runTactic(*ref, pr.config, absolute(pr.inputs));
  const std::vector<float> got = runKernel(*k, pr.config, pr.inputs);
  expectClose(got, want, magnitude, relTol(pr.reduction), std::string(tactic));
  const std::vector<float> again = runKernel(*k, pr.config, pr.inputs);
  EXPECT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(float)))
      << tactic << " is not deterministic from call to call";
}

// Random parameters with a valid output (the padded input holds the dilated kernel).
void randomProblem(Rng& rng, ConvolutionParams* p, Dims* x) {
  for (;;) {
    p->groups = static_cast<int32_t>(rng.uniformInt(1, 3));
    p->outChannels = static_cast<int32_t>(p->groups * rng.uniformInt(1, 5));
    p->kernelH = static_cast<int32_t>(rng.uniformInt(1, 4));
    p->kernelW = static_cast<int32_t>(rng.uniformInt(1, 4));
    p->strideH = static_cast<int32_t>(rng.uniformInt(1, 3));
    p->strideW = static_cast<int32_t>(rng.uniformInt(1, 3));
    p->dilationH = static_cast<int32_t>(rng.uniformInt(1, 2));
    p->dilationW = static_cast<int32_t>(rng.uniformInt(1, 2));
    p->padTop = static_cast<int32_t>(rng.uniformInt(0, 2));
    p->padBottom = static_cast<int32_t>(rng.uniformInt(0, 2));
    p->padLeft = static_cast<int32_t>(rng.uniformInt(0, 2));
    p->padRight = static_cast<int32_t>(rng.uniformInt(0, 2));
    *x = makeDims({rng.uniformInt(1, 2), p->groups * rng.uniformInt(1, 5), rng.uniformInt(1, 12),
                   rng.uniformInt(1, 12)});
    if (x->d[2] + p->padTop + p->padBottom >= p->dilationH * (p->kernelH - 1) + 1 &&
        x->d[3] + p->padLeft + p->padRight >= p->dilationW * (p->kernelW - 1) + 1)
      return;
  }
}

TEST(ConvolutionKernels, Im2colSgemmMatchesReferenceOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 120; ++i) {
    ConvolutionParams p;
    Dims x;
    randomProblem(rng, &p, &x);
    expectMatchesReference("im2col_sgemm", makeProblem(rng, p, x, rng.coin(), rng.coin()));
    if (HasFailure()) return;
  }
}

// The fused epilogue (residual, activation) in every tactic, against the reference; and the
// reference's epilogue against the convolution without one followed by the same add and activation.
TEST(ConvolutionKernels, EpilogueMatchesReferenceOnRandomShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const ActivationType kinds[] = {ActivationType::kRELU, ActivationType::kCLIP,
                                  ActivationType::kHARD_SWISH, ActivationType::kSIGMOID,
                                  ActivationType::kLEAKY_RELU};
  for (int i = 0; i < 60; ++i) {
    ConvolutionParams p;
    Dims x;
    randomProblem(rng, &p, &x);
    p.hasResidual = rng.coin();
    p.hasActivation = !p.hasResidual || rng.coin();
    p.activation = kinds[rng.uniformInt(0, 4)];
    p.activationAlpha = p.activation == ActivationType::kLEAKY_RELU ? 0.1f : 0.f;
    p.activationBeta = p.activation == ActivationType::kCLIP ? 0.5f : 0.f;
    const ConvProblem pr = makeProblem(rng, p, x, rng.coin(), rng.coin());
    expectMatchesReference("im2col_sgemm", pr);
    if (p.kernelH == 1 && p.kernelW == 1 && p.strideH == 1 && p.strideW == 1 && p.padTop == 0 &&
        p.padLeft == 0 && p.padBottom == 0 && p.padRight == 0)
      expectMatchesReference("direct_1x1", pr);

    // The reference's epilogue, applied by hand to the plain convolution's output.
    ConvProblem plain = pr;
    ConvolutionParams q = p;
    q.hasResidual = q.hasActivation = false;
    plain.config.params = q;
    const float* residual = nullptr;
    if (p.hasResidual) {
      residual = pr.inputs.back().data();
      plain.config.inputs.pop_back();
      plain.config.constantInputs.pop_back();
      plain.inputs.pop_back();
    }
    const Tactic* ref = findTactic(ops::Convolution::cpuTactics(), "reference");
    const std::vector<float> conv = runTactic(*ref, plain.config, plain.inputs);
    const std::vector<float> fused = runTactic(*ref, pr.config, pr.inputs);
    ASSERT_EQ(conv.size(), fused.size());
    for (size_t e = 0; e < conv.size(); ++e) {
      float v = conv[e] + (residual ? residual[e] : 0.f);
      if (p.hasActivation)
        v = ops::activation::activateByType(p.activation, v, p.activationAlpha, p.activationBeta);
      ASSERT_NEAR(fused[e], v, 1e-5f * (1.f + std::fabs(v))) << pr.what << " element " << e;
    }
    if (HasFailure()) return;
  }
}

// Sizes that cross the sgemm blocks (reduction > 256, more than 72 output channels) and the
// pixel tiling of im2col.
TEST(ConvolutionKernels, Im2colSgemmMatchesReferenceOnLargerShapes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  ConvolutionParams p;
  p.outChannels = 80;
  p.kernelH = p.kernelW = 3;
  p.padTop = p.padLeft = 1;
  p.padBottom = p.padRight = static_cast<int32_t>(rng.uniformInt(0, 1));
  const Dims x = makeDims({1, 30, 23, 25});
  expectMatchesReference("im2col_sgemm", makeProblem(rng, p, x, true, true));
  expectMatchesReference("im2col_sgemm", makeProblem(rng, p, x, false, false));
  p.groups = 2;
  p.strideH = 2;
  expectMatchesReference("im2col_sgemm",
                         makeProblem(rng, p, makeDims({2, 40, 13, 9}), true, rng.coin()));
}

TEST(ConvolutionKernels, Direct1x1MatchesReference) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int i = 0; i < 40; ++i) {
    ConvolutionParams p;
    p.groups = static_cast<int32_t>(rng.uniformInt(1, 3));
    p.outChannels = static_cast<int32_t>(p.groups * rng.uniformInt(1, 30));
    p.dilationH = static_cast<int32_t>(rng.uniformInt(1, 2));  // irrelevant for 1x1
    const Dims x = makeDims({rng.uniformInt(1, 2), p.groups * rng.uniformInt(1, 40),
                             rng.uniformInt(1, 20), rng.uniformInt(1, 20)});
    expectMatchesReference("direct_1x1", makeProblem(rng, p, x, rng.coin(), rng.coin()));
    expectMatchesReference("im2col_sgemm", makeProblem(rng, p, x, rng.coin(), rng.coin()));
    if (HasFailure()) return;
  }
}

TEST(ConvolutionKernels, Direct1x1DeclinesOtherShapes) {
  Rng rng;
  ConvolutionParams p;
  p.outChannels = 4;
  p.padTop = 1;
  ConvProblem pr = makeProblem(rng, p, makeDims({1, 2, 5, 5}), false, false);
  std::string why;
  EXPECT_FALSE(findTactic(ops::Convolution::cpuTactics(), "direct_1x1")->create(pr.config, &why));
  EXPECT_NE(why.find("1x1"), std::string::npos) << why;
}

TEST(ConvolutionKernels, TacticOrderPutsReferenceLast) {
  auto list = ops::Convolution::cpuTactics();
  ASSERT_GE(list.size(), 2u);
  EXPECT_STREQ(list.front().name, "im2col_sgemm");
  EXPECT_STREQ(list.back().name, "reference");
}

// Every tactic declines types, formats and inconsistent shapes it cannot run, saying why.
TEST(ConvolutionKernels, TacticsDeclineWithReasons) {
  Rng rng;
  ConvolutionParams p;
  p.outChannels = 3;
  const ConvProblem good = makeProblem(rng, p, makeDims({1, 2, 4, 4}), true, false);
  for (const Tactic& t : ops::Convolution::cpuTactics()) {
    SCOPED_TRACE(t.name);
    std::string why;
    KernelConfig c = good.config;
    c.inputs[0].type = DataType::kHALF;
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("fp16"), std::string::npos) << why;

    c = good.config;
    c.inputs[0].format = TensorFormat::kCHANNELS_LAST;
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("channels_last"), std::string::npos) << why;

    c = good.config;
    c.outputs[0].dims.d[3] = 5;  // a corrupted plan: output larger than the inputs give
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_FALSE(why.empty());

    c = good.config;
    c.inputs[1].dims.d[1] = 3;  // weights disagree with the input channels
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_NE(why.find("weights"), std::string::npos) << why;

    c = good.config;
    c.params = PoolingParams{};
    why.clear();
    EXPECT_FALSE(t.create(c, &why));
    EXPECT_FALSE(why.empty());
  }
}

class ConvReferenceHand : public ::testing::Test {
 protected:
  std::vector<float> run(const ConvolutionParams& p, const Dims& x, std::vector<float> xv,
                         std::vector<float> wv, std::vector<float> bias = {}) {
    Rng rng;
    ConvProblem pr = makeProblem(rng, p, x, !bias.empty(), false);
    pr.inputs[0] = std::move(xv);
    pr.inputs[1] = std::move(wv);
    if (!bias.empty()) pr.inputs[2] = std::move(bias);
    return runTactic(*findTactic(ops::Convolution::cpuTactics(), "reference"), pr.config,
                     pr.inputs);
  }
};

TEST_F(ConvReferenceHand, ValidWithBias) {
  ConvolutionParams p;
  p.outChannels = 1;
  p.kernelH = p.kernelW = 2;
  expectNear(run(p, makeDims({1, 1, 3, 3}), {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4}, {10}),
             {47, 57, 77, 87});
}

TEST_F(ConvReferenceHand, PaddedStrided) {
  ConvolutionParams p;
  p.outChannels = 1;
  p.kernelH = p.kernelW = 2;
  p.strideH = p.strideW = 2;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
  expectNear(run(p, makeDims({1, 1, 3, 3}), {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 4}),
             {4, 18, 36, 77});
}

TEST_F(ConvReferenceHand, AsymmetricPadding) {
  ConvolutionParams p;
  p.outChannels = 1;
  p.kernelH = 1;
  p.kernelW = 2;
  p.padLeft = 1;  // right unpadded: outputs x0*w1, x0*w0 + x1*w1, x1*w0 + x2*w1
  expectNear(run(p, makeDims({1, 1, 1, 3}), {1, 2, 3}, {10, 1}), {1, 12, 23});
}

TEST_F(ConvReferenceHand, Groups) {
  ConvolutionParams p;
  p.outChannels = 2;
  p.groups = 2;
  expectNear(run(p, makeDims({1, 2, 1, 1}), {2, 3}, {10, 100}, {1, -1}), {21, 299});
}

TEST_F(ConvReferenceHand, Dilation) {
  ConvolutionParams p;
  p.outChannels = 1;
  p.kernelH = 1;
  p.kernelW = 2;
  p.dilationW = 2;
  expectNear(run(p, makeDims({1, 1, 1, 5}), {1, 2, 3, 4, 5}, {1, 1}), {4, 6, 8});
}

TEST_F(ConvReferenceHand, ChannelsSum) {
  ConvolutionParams p;
  p.outChannels = 2;
  // Two input channels [1,2] and [3,4] (1x2 each); output k = sum over c of w[k][c] * x[c].
  expectNear(run(p, makeDims({1, 2, 1, 2}), {1, 2, 3, 4}, {1, 10, -1, 0.5f}), {31, 42, 0.5f, 0});
}

// Contexts run kernels concurrently: one kernel object, several threads, own buffers each.
TEST(ConvolutionKernels, ConcurrentRunsAreIdentical) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  ConvolutionParams p;
  p.outChannels = 8;
  p.kernelH = p.kernelW = 3;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
  const ConvProblem pr = makeProblem(rng, p, makeDims({1, 6, 10, 10}), true, true);
  std::string why;
  auto k = findTactic(ops::Convolution::cpuTactics(), "im2col_sgemm")->create(pr.config, &why);
  ASSERT_TRUE(k) << why;
  const std::vector<float> want = runKernel(*k, pr.config, pr.inputs);
  std::vector<std::vector<float>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) got[t] = runKernel(*k, pr.config, pr.inputs);
    });
  for (auto& t : threads) t.join();
  for (const auto& g : got)
    EXPECT_EQ(0, std::memcmp(g.data(), want.data(), want.size() * sizeof(float)));
}

// Speed is measured in bench/cpu_tactics_bench.cpp, never in a test.

}  // namespace
}  // namespace kiln::testing
