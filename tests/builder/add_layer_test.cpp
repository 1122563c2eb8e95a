// The network API's generic addLayer(): any built-in op by its parameter struct, the way a new op
// joins the API without a method of its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::testing {
namespace {

std::vector<float> randomValues(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Builds the network for the CPU and runs it on `x` (input "x", one output).
std::vector<float> run(INetworkDefinition& net, const std::vector<float>& x, size_t outCount,
                       const BuilderConfig& config = BuilderConfig()) {
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(net, config, plan);
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  EXPECT_TRUE(s.isOk()) << s.toString();
  if (!engine) return {};
  std::unique_ptr<IExecutionContext> ctx;
  EXPECT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<float> out(outCount, -1.f);
  EXPECT_TRUE(ctx->setTensorAddress("x", const_cast<float*>(x.data())).isOk());
  EXPECT_TRUE(ctx->setTensorAddress(net.getOutput(0)->getName(), out.data()).isOk());
  s = ctx->enqueue(nullptr);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return out;
}

TEST(AddLayer, GivesTheSameResultAsTheOpsOwnMethod) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<float> x = randomValues(2 * 3 * 5, rng);
  SoftmaxParams p;
  p.axis = 1;
  p.log = true;
  auto viaMethod = createNetwork();
  ITensor* a = viaMethod->addInput("x", DataType::kFLOAT, makeDims({2, 3, 5}));
  ASSERT_TRUE(viaMethod->markOutput(*viaMethod->addSoftmax(*a, p)->getOutput(0)).isOk());
  auto viaAddLayer = createNetwork();
  ITensor* b = viaAddLayer->addInput("x", DataType::kFLOAT, makeDims({2, 3, 5}));
  ILayer* layer = viaAddLayer->addLayer(p, {b});
  ASSERT_NE(layer, nullptr) << viaAddLayer->getLastError().toString();
  EXPECT_EQ(layer->getType(), LayerType::kSOFTMAX);
  ASSERT_TRUE(viaAddLayer->markOutput(*layer->getOutput(0)).isOk());
  EXPECT_EQ(run(*viaMethod, x, x.size()), run(*viaAddLayer, x, x.size()));
}

TEST(AddLayer, TakesWeightsAsConstantLayers) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<float> x = randomValues(1 * 2 * 4 * 4, rng);
  const std::vector<float> w = randomValues(3 * 2 * 3 * 3, rng);
  ConvolutionParams p;
  p.outChannels = 3;
  p.kernelH = p.kernelW = 3;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
  auto viaMethod = createNetwork();
  ITensor* a = viaMethod->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  const Weights weights{DataType::kFLOAT, w.data(), static_cast<int64_t>(w.size())};
  ASSERT_TRUE(
      viaMethod->markOutput(*viaMethod->addConvolution(*a, p, weights, {})->getOutput(0)).isOk());
  auto viaAddLayer = createNetwork();
  ITensor* b = viaAddLayer->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  ILayer* k = viaAddLayer->addConstant(makeDims({3, 2, 3, 3}), weights);
  ASSERT_NE(k, nullptr);
  ILayer* conv = viaAddLayer->addLayer(p, {b, k->getOutput(0)});
  ASSERT_NE(conv, nullptr) << viaAddLayer->getLastError().toString();
  ASSERT_TRUE(viaAddLayer->markOutput(*conv->getOutput(0)).isOk());
  // One timing cache for both builds: the convolution's tactics (im2col_sgemm, the reference)
  // round differently, and two independent timings may pick different ones.
  BuilderConfig config;
  config.timingCachePath = (std::filesystem::temp_directory_path() /
                            ("kiln_add_layer_" + std::to_string(rng()) + ".cache"))
                               .string();
  const std::vector<float> a1 = run(*viaMethod, x, 3 * 16, config);
  const std::vector<float> a2 = run(*viaAddLayer, x, 3 * 16, config);
  std::filesystem::remove(config.timingCachePath);
  EXPECT_EQ(a1, a2);
}

TEST(AddLayer, RefusesWhatIsNotABuiltInOpsParameters) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4}));
  const SoftmaxParams p;
  ITensor* in[] = {x};
  EXPECT_EQ(net->addBuiltinLayer(LayerType::kSOFTMAX, &p, sizeof(p) + 1, in, 1), nullptr);
  EXPECT_NE(net->getLastError().message().find("not of its parameter struct"), std::string::npos)
      << net->getLastError().message();
  auto net2 = createNetwork();
  ITensor* y = net2->addInput("x", DataType::kFLOAT, makeDims({4}));
  ITensor* in2[] = {y};
  EXPECT_EQ(net2->addBuiltinLayer(LayerType::kPLUGIN, &p, sizeof(p), in2, 1), nullptr);
  EXPECT_NE(net2->getLastError().message().find("Plugin is not a built-in op"), std::string::npos)
      << net2->getLastError().message();
  auto net3 = createNetwork();
  ITensor* z = net3->addInput("x", DataType::kFLOAT, makeDims({4}));
  // The op's shape rule still judges the layer: Softmax takes one input.
  EXPECT_EQ(net3->addLayer(p, {z, z}), nullptr);
  EXPECT_NE(net3->getLastError().message().find("expects 1 input"), std::string::npos)
      << net3->getLastError().message();
}

}  // namespace
}  // namespace kiln::testing
