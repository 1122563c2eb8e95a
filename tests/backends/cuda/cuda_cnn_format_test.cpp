// A small ResNet/MobileNet-like CNN built for the GPU (gpu label): in FP16 it runs channels-last
// end to end (one reformat at the input, one at the output), every convolution carries its
// epilogue (conv_fusion), the 1x1 convolutions may run as cuBLASLt products, and the outputs
// match the CPU backend's on random data; in FP32 it matches to FP32 accuracy whatever the formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "backends/cuda/cuda_test_util.h"
#include "backends/cuda/device.h"
#include "core/plan.h"
#include "kiln/kiln.h"
#include "log_capture_util.h"

namespace kiln {
namespace {

constexpr int64_t kN = 2, kC = 16, kH = 12, kW = 12;

std::vector<float> randomValues(size_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// conv3x3-relu, conv3x3 + x - relu (a basic block), conv1x1 to 32 - relu6, max pool 2x2,
// conv1x1 + its input (an inverted residual's projection), global average pool. `batch` -1: a
// dynamic batch axis.
std::unique_ptr<INetworkDefinition> smallCnnWithBatch(std::vector<std::vector<float>>& keep,
                                                      int64_t batch) {
  std::mt19937 rng(7);
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({batch, kC, kH, kW}));
  auto conv = [&](ITensor& in, int32_t k, int32_t taps) {
    ConvolutionParams p;
    p.outChannels = k;
    p.kernelH = p.kernelW = taps;
    p.padTop = p.padLeft = p.padBottom = p.padRight = taps / 2;
    const int64_t c = in.getDimensions().d[1];
    std::vector<float> w =
        randomValues(size_t(k * c * taps * taps), rng, 1.f / std::sqrt(float(c * taps * taps)));
    std::vector<float> b = randomValues(size_t(k), rng, 0.1f);
    ITensor* y = net->addConvolution(in, p, Weights{DataType::kFLOAT, w.data(), int64_t(w.size())},
                                     Weights{DataType::kFLOAT, b.data(), int64_t(b.size())})
                     ->getOutput(0);
    // Kept alive until the build (moving a vector keeps its buffer where it is).
    keep.push_back(std::move(w));
    keep.push_back(std::move(b));
    return y;
  };
  auto act = [&](ITensor& in, ActivationType t, float beta = 0.f) {
    ActivationParams p;
    p.type = t;
    p.beta = beta;
    return net->addActivation(in, p)->getOutput(0);
  };
  auto add = [&](ITensor& a, ITensor& b) {
    return net->addElementwise(a, b, ElementwiseOp::kADD)->getOutput(0);
  };
  ITensor* h = act(*conv(*x, kC, 3), ActivationType::kRELU);
  h = act(*add(*conv(*h, kC, 3), *x), ActivationType::kRELU);
  h = act(*conv(*h, 32, 1), ActivationType::kCLIP, 6.f);
  PoolingParams pool;
  pool.type = PoolingType::kMAX;
  pool.kernelH = pool.kernelW = pool.strideH = pool.strideW = 2;
  h = net->addPooling(*h, pool)->getOutput(0);
  h = add(*conv(*h, 32, 1), *h);
  PoolingParams gap;
  gap.type = PoolingType::kGLOBAL_AVERAGE;
  h = net->addPooling(*h, gap)->getOutput(0);
  h->setName("y");
  EXPECT_TRUE(net->markOutput(*h).isOk());
  return net;
}

std::unique_ptr<INetworkDefinition> smallCnn(std::vector<std::vector<float>>& keep) {
  return smallCnnWithBatch(keep, kN);
}

// ViT's patch embedding: a 4x4 convolution of stride 4 to 32 channels, flatten(2) and
// transpose(1, 2) to tokens [N, 9, 32].
std::unique_ptr<INetworkDefinition> patchTokens(std::vector<std::vector<float>>& keep) {
  std::mt19937 rng(11);
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kN, kC, kH, kW}));
  ConvolutionParams p;
  p.outChannels = 32;
  p.kernelH = p.kernelW = p.strideH = p.strideW = 4;
  std::vector<float> w = randomValues(size_t(32 * kC * 16), rng, 1.f / std::sqrt(float(kC * 16)));
  std::vector<float> b = randomValues(32, rng, 0.1f);
  ITensor* y = net->addConvolution(*x, p, Weights{DataType::kFLOAT, w.data(), int64_t(w.size())},
                                   Weights{DataType::kFLOAT, b.data(), int64_t(b.size())})
                   ->getOutput(0);
  keep.push_back(std::move(w));
  keep.push_back(std::move(b));
  ShuffleParams flatten;
  flatten.hasReshape = true;
  flatten.reshapeDims = makeDims({0, 0, -1});
  y = net->addShuffle(*y, flatten)->getOutput(0);
  ShuffleParams transpose;
  transpose.hasFirstTranspose = true;
  transpose.firstTranspose[0] = 0;
  transpose.firstTranspose[1] = 2;
  transpose.firstTranspose[2] = 1;
  y = net->addShuffle(*y, transpose)->getOutput(0);
  y->setName("y");
  EXPECT_TRUE(net->markOutput(*y).isOk());
  return net;
}

using NetworkMaker = std::unique_ptr<INetworkDefinition> (*)(std::vector<std::vector<float>>&);

// `timeFormats`: BuilderConfig::timeFormatAlternatives; off, the formats are the greedy rule's,
// which these small layers let the tests check structurally (timed, a small convolution may well
// run faster linear than between two reformats).
std::vector<uint8_t> buildFor(const std::string& target, bool half, NetworkMaker make = &smallCnn,
                              bool timeFormats = false) {
  std::vector<std::vector<float>> keep;
  auto net = make(keep);
  BuilderConfig config;
  config.target = target;
  config.builtinHalf = half;
  config.timingRuns = 2;
  config.timeFormatAlternatives = timeFormats;
  std::vector<uint8_t> plan;
  const Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return plan;
}

// Runs the plan on `x` (host data) and returns y.
std::vector<float> run(const std::vector<uint8_t>& planBytes, const std::vector<float>& x) {
  std::unique_ptr<IEngine> engine;
  Status s = createRuntime()->deserializeEngine(planBytes.data(), planBytes.size(), engine);
  EXPECT_TRUE(s.isOk()) << s.toString();
  if (!engine) return {};
  std::unique_ptr<IExecutionContext> ctx;
  EXPECT_TRUE(engine->createExecutionContext(ctx).isOk());
  if (engine->getTensorDesc("x").dims.d[0] < 0)  // a profile plan: run at batch kN
    EXPECT_TRUE(ctx->setInputShape("x", makeDims({kN, kC, kH, kW})).isOk());
  std::vector<float> y(size_t(volume(ctx->getTensorShape("y"))), NAN);
  if (std::string(engine->getTarget()).rfind("cuda", 0) != 0) {
    EXPECT_TRUE(ctx->setTensorAddress("x", const_cast<float*>(x.data())).isOk());
    EXPECT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
    s = ctx->enqueue(nullptr);
    EXPECT_TRUE(s.isOk()) << s.toString();
    return y;
  }
  cuda::DeviceBuffer dx, dy;
  cuda::StreamHandle stream;
  EXPECT_TRUE(stream.create().isOk());
  EXPECT_TRUE(dx.allocate(x.size() * 4, "x").isOk());
  EXPECT_TRUE(dy.allocate(y.size() * 4, "y").isOk());
  EXPECT_TRUE(cuda::copyToDevice(dx.data(), x.data(), x.size() * 4).isOk());
  EXPECT_TRUE(ctx->setTensorAddress("x", dx.data()).isOk());
  EXPECT_TRUE(ctx->setTensorAddress("y", dy.data()).isOk());
  s = ctx->enqueue(stream.get());
  EXPECT_TRUE(s.isOk()) << s.toString();
  EXPECT_TRUE(cuda::synchronize(stream.get()).isOk());
  EXPECT_TRUE(cuda::copyToHost(y.data(), dy.data(), y.size() * 4).isOk());
  return y;
}

double relL2(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    den += double(want[i]) * want[i];
  }
  return std::sqrt(num / den);
}

// The plan's output on fresh random data against the CPU backend's plan of the same network.
void expectMatchesTheCpu(const std::vector<uint8_t>& bytes, NetworkMaker make, double tolerance) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<float> x = randomValues(size_t(kN * kC * kH * kW), rng, 1.f);
  const std::vector<float> want = run(buildFor("cpu", false, make), x);
  const std::vector<float> got = run(bytes, x);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LT(relL2(got, want), tolerance);
}

TEST(CudaCnnFormats, Fp16RunsChannelsLastEndToEndWithFusedEpilogues) {
  KILN_SKIP_WITHOUT_GPU();
  const std::vector<uint8_t> bytes = buildFor("cuda:0", true);
  plan::Plan p;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), p).isOk());
  int convs = 0, reformats = 0, others = 0;
  for (const plan::Step& s : p.steps) {
    if (s.type == LayerType::kCONVOLUTION) {
      ++convs;
      EXPECT_EQ(p.tensors[size_t(s.inputs[0])].format, TensorFormat::kCHANNELS_LAST) << s.layerName;
      EXPECT_EQ(p.tensors[size_t(s.outputs[0])].format, TensorFormat::kCHANNELS_LAST)
          << s.layerName;
      EXPECT_EQ(p.tensors[size_t(s.inputs[1])].format, TensorFormat::kCHANNELS_LAST)
          << s.layerName << ": weights reformatted at build time";
    } else if (s.type == LayerType::kREFORMAT) {
      ++reformats;
    } else {
      ++others;  // the two poolings
    }
  }
  EXPECT_EQ(convs, 4) << "every activation and residual add fused into its convolution";
  EXPECT_EQ(reformats, 2) << "one reformat at the input, one at the output";
  EXPECT_EQ(others, 2);
  expectMatchesTheCpu(bytes, &smallCnn, 2e-3);
}

TEST(CudaCnnFormats, Fp32MatchesTheCpuBackend) {
  KILN_SKIP_WITHOUT_GPU();
  std::mt19937 rng(std::random_device{}());
  const std::vector<float> x = randomValues(size_t(kN * kC * kH * kW), rng, 1.f);
  const std::vector<float> want = run(buildFor("cpu", false), x);
  const std::vector<float> got = run(buildFor("cuda:0", false), x);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_LT(relL2(got, want), 1e-5);
}

// The patch tokens read the convolution's channels-last map in its memory order: the flatten
// and transpose are one Shuffle (transpose_motion's flatten), run as a plain copy
// (channels_last_copy), with no reformat between it and the convolution.
TEST(CudaCnnFormats, Fp16PatchTokensReadTheChannelsLastMapInPlace) {
  KILN_SKIP_WITHOUT_GPU();
  const std::vector<uint8_t> bytes = buildFor("cuda:0", true, &patchTokens);
  plan::Plan p;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), p).isOk());
  int32_t convOutput = -1;
  bool sawShuffle = false;
  for (const plan::Step& s : p.steps) {
    if (s.type == LayerType::kCONVOLUTION) convOutput = s.outputs[0];
    if (s.type != LayerType::kSHUFFLE) continue;
    sawShuffle = true;
    EXPECT_EQ(s.tactic, "channels_last_copy") << s.layerName;
    EXPECT_EQ(s.inputs[0], convOutput) << "no reformat between the convolution and the tokens";
  }
  EXPECT_TRUE(sawShuffle);
  expectMatchesTheCpu(bytes, &patchTokens, 2e-3);
}

// The format decision timed (format_regions.h): the verbose log gives every alternative's plan
// time against the best so far; the plan must be the one those times chose, and right.
void expectTheTimedFormatsChoseThePlan(const BuilderConfig& base, NetworkMaker make) {
  testing::LogCapture logger;
  std::vector<std::vector<float>> keep;
  auto net = make(keep);
  BuilderConfig config = base;
  config.target = "cuda:0";
  config.builtinHalf = true;
  config.timingRuns = 2;
  config.verbose = true;
  std::vector<uint8_t> bytes;
  const Status s = createBuilder()->buildSerializedNetwork(*net, config, bytes);
  const std::string text = logger.text();
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_NE(text.find("format region 1 of 1 ("), std::string::npos) << text;
  // "  all linear: A ms against B ms: taken" (or "stopped once its steps cost more than the best
  // less 1% against ..."), then maybe "  its exits linear (...): ...".
  std::istringstream lines(text);
  std::string line;
  bool wholeRegionLinear = false;
  int trials = 0;
  while (std::getline(lines, line)) {
    const bool all = line.rfind("  all linear: ", 0) == 0;
    if (!all && line.rfind("  its exits linear (", 0) != 0) continue;
    ++trials;
    const bool taken = line.size() > 7 && line.compare(line.size() - 7, 7, ": taken") == 0;
    const size_t against = line.find(" against ");
    ASSERT_NE(against, std::string::npos) << line;
    double alternative = 0, best = 0;
    const bool timed =
        std::sscanf(line.c_str() + line.rfind(": ", against) + 2, "%lf ms", &alternative) == 1;
    ASSERT_EQ(std::sscanf(line.c_str() + against + 9, "%lf ms", &best), 1) << line;
    if (timed)
      EXPECT_EQ(taken, alternative < best * 0.99) << line;
    else
      EXPECT_FALSE(taken) << line;
    wholeRegionLinear = wholeRegionLinear || (all && taken);
  }
  EXPECT_GE(trials, 1) << text;
  plan::Plan p;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), p).isOk());
  int channelsLast = 0;
  for (const plan::Tensor& t : p.tensors)
    channelsLast +=
        t.kind == plan::TensorKind::kACTIVATION && t.format == TensorFormat::kCHANNELS_LAST;
  EXPECT_EQ(channelsLast == 0, wholeRegionLinear) << text;
  expectMatchesTheCpu(bytes, &smallCnn, 2e-3);
}

TEST(CudaCnnFormats, Fp16FormatsTimedAcrossTheGraphKeepTheFasterPlan) {
  KILN_SKIP_WITHOUT_GPU();
  expectTheTimedFormatsChoseThePlan(BuilderConfig{}, &smallCnn);
}

// The same decision in a profile build (profile_build.cpp): every corner lowered with the
// alternative's formats, the profiles' plans timed at opt.
TEST(CudaCnnFormats, Fp16FormatsTimedAcrossTheGraphInAProfileBuild) {
  KILN_SKIP_WITHOUT_GPU();
  BuilderConfig config;
  OptimizationProfile profile;
  ASSERT_TRUE(profile.setDimensions("x", OptProfileSelector::kMIN, makeDims({1, kC, kH, kW})));
  ASSERT_TRUE(profile.setDimensions("x", OptProfileSelector::kOPT, makeDims({kN, kC, kH, kW})));
  ASSERT_TRUE(profile.setDimensions("x", OptProfileSelector::kMAX, makeDims({4, kC, kH, kW})));
  config.profiles.push_back(profile);
  expectTheTimedFormatsChoseThePlan(
      config, [](std::vector<std::vector<float>>& keep) { return smallCnnWithBatch(keep, -1); });
}

}  // namespace
}  // namespace kiln
