// Dynamic shapes (DESIGN.md §7) through the public API: a network with a dynamic batch built once
// with optimization profiles gives, at every batch inside a profile, what a plan built statically
// for that batch gives; every refusal (build rules, out-of-profile shapes, unset inputs, named
// dims that disagree) says what and where.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

// Fixed weights, fresh per test run of the same seed: every network below shares them.
struct Weights4 {
  std::vector<float> conv = random(4 * 3 * 3 * 3, 1), convBias = random(4, 2),
                     fc = random(10 * 4 * 4 * 4, 3), fcBias = random(10, 4);
  static std::vector<float> random(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  }
};

// x [N, 3, 8, 8] and y [N, 4, 8, 8] -> conv(x) + y -> ReLU -> 2x2 max pool -> flatten ({0, -1})
// -> fully connected 10 -> softmax: "out" [N, 10]. `batch` -1 makes N dynamic (named "N").
std::unique_ptr<INetworkDefinition> makeNetwork(int64_t batch, const Weights4& w) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({batch, 3, 8, 8}));
  ITensor* y = net->addInput("y", DataType::kFLOAT, makeDims({batch, 4, 8, 8}));
  if (batch < 0) {
    EXPECT_TRUE(x->setDimensionName(0, "N"));
    EXPECT_TRUE(y->setDimensionName(0, "N"));
  }
  ConvolutionParams conv;
  conv.outChannels = 4;
  conv.kernelH = conv.kernelW = 3;
  conv.padTop = conv.padLeft = conv.padBottom = conv.padRight = 1;
  ILayer* c =
      net->addConvolution(*x, conv, {DataType::kFLOAT, w.conv.data(), int64_t(w.conv.size())},
                          {DataType::kFLOAT, w.convBias.data(), int64_t(w.convBias.size())});
  ILayer* sum = net->addElementwise(*c->getOutput(0), *y, ElementwiseOp::kADD);
  ILayer* relu = net->addActivation(*sum->getOutput(0), ActivationParams{});
  PoolingParams pool;
  pool.type = PoolingType::kMAX;
  pool.kernelH = pool.kernelW = 2;
  pool.strideH = pool.strideW = 2;
  ILayer* p = net->addPooling(*relu->getOutput(0), pool);
  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({0, -1});
  ILayer* f = net->addShuffle(*p->getOutput(0), flat);
  ILayer* fc = net->addFullyConnected(
      *f->getOutput(0), 10, {DataType::kFLOAT, w.fc.data(), int64_t(w.fc.size())},
      {DataType::kFLOAT, w.fcBias.data(), int64_t(w.fcBias.size())});
  SoftmaxParams sm;
  sm.axis = 1;
  ILayer* out = net->addSoftmax(*fc->getOutput(0), sm);
  out->getOutput(0)->setName("out");
  EXPECT_TRUE(net->markOutput(*out->getOutput(0)).isOk());
  EXPECT_TRUE(net->getLastError().isOk()) << net->getLastError().toString();
  return net;
}

OptimizationProfile batchProfile(int64_t lo, int64_t opt, int64_t hi) {
  OptimizationProfile p;
  for (const char* name : {"x", "y"}) {
    const int64_t c = name[0] == 'x' ? 3 : 4;
    p.setDimensions(name, OptProfileSelector::kMIN, makeDims({lo, c, 8, 8}));
    p.setDimensions(name, OptProfileSelector::kOPT, makeDims({opt, c, 8, 8}));
    p.setDimensions(name, OptProfileSelector::kMAX, makeDims({hi, c, 8, 8}));
  }
  return p;
}

Status build(const INetworkDefinition& net, const std::vector<OptimizationProfile>& profiles,
             std::unique_ptr<IEngine>& engine) {
  BuilderConfig config;
  config.profiles = profiles;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  std::vector<uint8_t> plan;
  KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(net, config, plan));
  return createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
}

std::vector<float> runAt(IExecutionContext& ctx, int64_t batch, const std::vector<float>& x,
                         const std::vector<float>& y, bool setShapes) {
  if (setShapes) {
    EXPECT_TRUE(ctx.setInputShape("x", makeDims({batch, 3, 8, 8})).isOk());
    EXPECT_TRUE(ctx.setInputShape("y", makeDims({batch, 4, 8, 8})).isOk());
  }
  std::vector<float> out(static_cast<size_t>(batch) * 10, -1.f);
  EXPECT_TRUE(ctx.setTensorAddress("x", const_cast<float*>(x.data())).isOk());
  EXPECT_TRUE(ctx.setTensorAddress("y", const_cast<float*>(y.data())).isOk());
  EXPECT_TRUE(ctx.setTensorAddress("out", out.data()).isOk());
  const Status s = ctx.enqueue(nullptr);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return out;
}

// The oracle: the same network built statically at `batch`.
std::vector<float> staticRun(const Weights4& w, int64_t batch, const std::vector<float>& x,
                             const std::vector<float>& y) {
  auto net = makeNetwork(batch, w);
  std::unique_ptr<IEngine> engine;
  const Status s = build(*net, {}, engine);
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IExecutionContext> ctx;
  EXPECT_TRUE(engine->createExecutionContext(ctx).isOk());
  return runAt(*ctx, batch, x, y, false);
}

void expectClose(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << "element " << i;
}

TEST(DynamicShapes, RandomBatchesInsideTheProfileMatchStaticPlans) {
  const Weights4 w;
  auto net = makeNetwork(-1, w);
  EXPECT_EQ(net->getInput(0)->getDimensions().d[0], -1);
  std::unique_ptr<IEngine> engine;
  Status s = build(*net, {batchProfile(1, 4, 8)}, engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(engine->getNbOptimizationProfiles(), 1);
  EXPECT_EQ(engine->getTensorDesc("x").dims.d[0], -1);
  EXPECT_EQ(engine->getTensorDesc("out").dims.d[0], -1);
  EXPECT_EQ(engine->getTensorDesc("out").dims.d[1], 10);
  EXPECT_EQ(engine->getProfileShape("x", 0, OptProfileSelector::kMAX).d[0], 8);
  EXPECT_NE(engine->inspect().find("\"profiles\": [\n    {\"index\": 0"), std::string::npos);

  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> pick(1, 8);
  std::vector<int64_t> batches = {1, 8, 4};
  for (int i = 0; i < 4; ++i) batches.push_back(pick(rng));
  int64_t previous = -1;
  for (int64_t b : batches) {
    SCOPED_TRACE("batch " + std::to_string(b));
    const auto x = Weights4::random(size_t(b) * 3 * 64, rng()),
               y = Weights4::random(size_t(b) * 4 * 64, rng());
    ASSERT_TRUE(ctx->setInputShape("x", makeDims({b, 3, 8, 8})).isOk());
    std::vector<std::string> missing;
    // y is unset, or still holds the previous batch: N disagrees until it is set too.
    const Status partial = ctx->inferShapes(missing);
    if (previous < 0) {
      EXPECT_TRUE(partial.isOk());
      EXPECT_EQ(missing, std::vector<std::string>{"y"});
    } else if (previous != b) {
      EXPECT_NE(partial.message().find("are both 'N'"), std::string::npos) << partial.message();
    }
    previous = b;
    ASSERT_TRUE(ctx->setInputShape("y", makeDims({b, 4, 8, 8})).isOk());
    ASSERT_TRUE(ctx->inferShapes(missing).isOk());
    EXPECT_TRUE(missing.empty());
    EXPECT_EQ(ctx->getTensorShape("out").d[0], b);
    expectClose(runAt(*ctx, b, x, y, false), staticRun(w, b, x, y));
  }
}

TEST(DynamicShapes, SeveralProfilesAndContexts) {
  const Weights4 w;
  auto net = makeNetwork(-1, w);
  std::unique_ptr<IEngine> engine;
  Status s = build(*net, {batchProfile(1, 2, 4), batchProfile(5, 12, 16)}, engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(engine->getNbOptimizationProfiles(), 2);
  std::unique_ptr<IExecutionContext> a, b;
  ASSERT_TRUE(engine->createExecutionContext(a).isOk());
  ASSERT_TRUE(engine->createExecutionContext(b).isOk());
  ASSERT_TRUE(b->setOptimizationProfile(1).isOk());
  EXPECT_EQ(b->getOptimizationProfile(), 1);
  EXPECT_FALSE(b->setOptimizationProfile(2).isOk());
  std::mt19937 rng(7);
  for (int64_t batch : {3, 16, 7}) {
    IExecutionContext& ctx = batch <= 4 ? *a : *b;
    const auto x = Weights4::random(size_t(batch) * 3 * 64, rng()),
               y = Weights4::random(size_t(batch) * 4 * 64, rng());
    expectClose(runAt(ctx, batch, x, y, true), staticRun(w, batch, x, y));
  }
}

// CUDA graphs are a CUDA engine's (tests/backends/cuda/cuda_graph_cache_test.cpp runs them);
// a CPU context refuses them clearly and runs as before.
TEST(DynamicShapes, CudaGraphsAreRefusedOnTheCpu) {
  const Weights4 w;
  auto net = makeNetwork(-1, w);
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(build(*net, {batchProfile(1, 2, 4)}, engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  EXPECT_FALSE(ctx->getCudaGraphs()) << "a CPU context has no graphs by default";
  const Status s = ctx->setCudaGraphs(true);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("need a CUDA engine"), std::string::npos) << s.toString();
  EXPECT_TRUE(ctx->setCudaGraphs(false).isOk());
  EXPECT_FALSE(ctx->getCudaGraphs());
  std::mt19937 rng(11);
  const auto x = Weights4::random(size_t(3) * 3 * 64, rng()),
             y = Weights4::random(size_t(3) * 4 * 64, rng());
  expectClose(runAt(*ctx, 3, x, y, true), staticRun(w, 3, x, y));
  const CudaGraphStats stats = ctx->getCudaGraphStats();
  EXPECT_EQ(stats.captured + stats.replayed + stats.direct + stats.failed + stats.held, 0);
}

TEST(DynamicShapes, RunTimeRefusalsNameInputAxisValueAndRange) {
  const Weights4 w;
  auto net = makeNetwork(-1, w);
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(build(*net, {batchProfile(1, 2, 8), batchProfile(9, 16, 32)}, engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());

  // Unset input.
  std::vector<std::string> missing;
  ASSERT_TRUE(ctx->inferShapes(missing).isOk());
  EXPECT_EQ(missing, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(ctx->getTensorShape("out").d[0], -1);
  Status s = ctx->enqueue(nullptr);
  EXPECT_NE(s.message().find("no shape set for input 'x' (profile 0 accepts [1..8]x3x8x8)"),
            std::string::npos)
      << s.message();

  // Outside the profile, with a profile that fits named.
  s = ctx->setInputShape("x", makeDims({20, 3, 8, 8}));
  EXPECT_NE(s.message().find("input 'x' axis 0 is 20, outside profile 0's range [1, 8]"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("profile 1 accepts it"), std::string::npos) << s.message();
  s = ctx->setInputShape("x", makeDims({40, 3, 8, 8}));
  EXPECT_NE(s.message().find("no profile of this plan accepts it"), std::string::npos);
  s = ctx->setInputShape("x", makeDims({2, 5, 8, 8}));
  EXPECT_NE(s.message().find("input 'x' axis 1 is fixed at 3, not 5"), std::string::npos)
      << s.message();
  s = ctx->setInputShape("x", makeDims({2, 3, 8}));
  EXPECT_NE(s.message().find("has rank 4"), std::string::npos) << s.message();
  s = ctx->setInputShape("nope", makeDims({2}));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);

  // Named dims that disagree.
  ASSERT_TRUE(ctx->setInputShape("x", makeDims({2, 3, 8, 8})).isOk());
  ASSERT_TRUE(ctx->setInputShape("y", makeDims({3, 4, 8, 8})).isOk());
  s = ctx->inferShapes(missing);
  EXPECT_NE(s.message().find("input 'x' axis 0 and input 'y' axis 0 are both 'N' and must be "
                             "equal, but their shapes give 2 and 3"),
            std::string::npos)
      << s.message();
  std::vector<float> x(2 * 3 * 64), y(3 * 4 * 64), out(20);
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("out", out.data()).isOk());
  s = ctx->enqueue(nullptr);
  EXPECT_NE(s.message().find("are both 'N'"), std::string::npos) << s.message();
  // Fixed, it runs.
  ASSERT_TRUE(ctx->setInputShape("y", makeDims({2, 4, 8, 8})).isOk());
  EXPECT_TRUE(ctx->enqueue(nullptr).isOk());
  // Selecting a profile forgets the shapes.
  ASSERT_TRUE(ctx->setOptimizationProfile(1).isOk());
  ASSERT_TRUE(ctx->inferShapes(missing).isOk());
  EXPECT_EQ(missing.size(), 2u);
}

std::string buildError(const INetworkDefinition& net, const std::vector<OptimizationProfile>& p) {
  std::unique_ptr<IEngine> engine;
  const Status s = build(net, p, engine);
  EXPECT_FALSE(s.isOk());
  return s.message();
}

TEST(DynamicShapes, BuildRulesNameProfileInputAxisAndValues) {
  const Weights4 w;
  auto net = makeNetwork(-1, w);
  EXPECT_NE(buildError(*net, {}).find("the network has dynamic inputs ('x' is -1x3x8x8, 'y' is "
                                      "-1x4x8x8): add an optimization profile"),
            std::string::npos);
  OptimizationProfile p = batchProfile(4, 2, 8);
  EXPECT_NE(buildError(*net, {p}).find("profile 0: input 'x' axis 0: min 4, opt 2, max 8 do not "
                                       "satisfy min <= opt <= max"),
            std::string::npos);
  p = batchProfile(1, 2, 8);
  p.setDimensions("x", OptProfileSelector::kMAX, makeDims({8, 4, 8, 8}));
  EXPECT_NE(buildError(*net, {batchProfile(1, 2, 4), p})
                .find("profile 1: input 'x' axis 1 is fixed at 3 in the network, but the max "
                      "shape gives 4"),
            std::string::npos);
  OptimizationProfile partial;
  partial.setDimensions("x", OptProfileSelector::kMIN, makeDims({1, 3, 8, 8}));
  partial.setDimensions("x", OptProfileSelector::kOPT, makeDims({1, 3, 8, 8}));
  EXPECT_NE(buildError(*net, {partial}).find("profile 0: input 'x' has no max shape"),
            std::string::npos);
  p = batchProfile(1, 2, 8);
  p.setDimensions("z", OptProfileSelector::kMIN, makeDims({1}));
  EXPECT_NE(buildError(*net, {p}).find("gives shapes for 'z', which is no network input"),
            std::string::npos);
  // Named dims must overlap.
  p = batchProfile(1, 2, 4);
  p.setDimensions("y", OptProfileSelector::kMIN, makeDims({5, 4, 8, 8}));
  p.setDimensions("y", OptProfileSelector::kOPT, makeDims({2, 4, 8, 8}));
  p.setDimensions("y", OptProfileSelector::kMAX, makeDims({8, 4, 8, 8}));
  EXPECT_NE(buildError(*net, {p}).find("min 5, opt 2"), std::string::npos);
  auto fixed = makeNetwork(2, w);
  EXPECT_NE(
      buildError(*fixed, {batchProfile(1, 2, 4)}).find("no network input has a dynamic (-1) dim"),
      std::string::npos);
  // A static plan takes setInputShape with its own dims only, and has its one implicit profile.
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(build(*fixed, {}, engine).isOk());
  EXPECT_EQ(engine->getNbOptimizationProfiles(), 1);
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  EXPECT_TRUE(ctx->setInputShape("x", makeDims({2, 3, 8, 8})).isOk());
  EXPECT_NE(ctx->setInputShape("x", makeDims({3, 3, 8, 8})).message().find("is fixed at 2, not 3"),
            std::string::npos);
  std::vector<std::string> missing;
  EXPECT_TRUE(ctx->inferShapes(missing).isOk());
  EXPECT_TRUE(missing.empty());
  EXPECT_EQ(ctx->getTensorShape("out").d[0], 2);
}

// A network whose parameters bake in one batch (a reshape to [2, 256] rather than [0, -1]) cannot
// serve a range: the build says so instead of planning something wrong.
TEST(DynamicShapes, ParametersThatDependOnTheBatchAreRefused) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({-1, 4, 8, 8}));
  ASSERT_TRUE(net->setWorkingShape("x", makeDims({2, 4, 8, 8})).isOk());
  ShuffleParams flat;
  flat.hasReshape = true;
  flat.reshapeDims = makeDims({2, 256});
  ILayer* f = net->addShuffle(*x, flat);
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(net->markOutput(*f->getOutput(0)).isOk());
  OptimizationProfile p;
  p.setDimensions("x", OptProfileSelector::kMIN, makeDims({1, 4, 8, 8}));
  p.setDimensions("x", OptProfileSelector::kOPT, makeDims({2, 4, 8, 8}));
  p.setDimensions("x", OptProfileSelector::kMAX, makeDims({4, 4, 8, 8}));
  const std::string e = buildError(*net, {p});
  EXPECT_NE(e.find("profile 0's min shapes"), std::string::npos) << e;
  // The working shape is checked like any other: one the reshape refuses changes nothing.
  EXPECT_FALSE(net->setWorkingShape("x", makeDims({3, 4, 8, 8})).isOk());
  EXPECT_EQ(f->getOutput(0)->getDimensions().d[0], 2);
}

}  // namespace
}  // namespace kiln
