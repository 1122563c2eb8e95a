// Reshapes between activations are planned as aliases (src/builder/reshape_aliases.h): the
// output shares the input's arena bytes (the step's copy becomes nothing), and the input stays
// alive as long as any of its names is read.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/plan.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

ShuffleParams reshapeTo(const Dims& d) {
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = d;
  return p;
}

TEST(ReshapeAlias, ReshapesBetweenActivationsMoveNoBytesAndKeepTheirInputAlive) {
  // a = relu(x); b = reshape(a); c = sigmoid(b); d = reshape(c); y = a + d. `a` is read last by
  // the add, after c is made: its bytes must not be reused for c while b and a are one range.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
  ActivationParams relu;
  relu.type = ActivationType::kRELU;
  ITensor* a = net->addActivation(*x, relu)->getOutput(0);
  ITensor* b = net->addShuffle(*a, reshapeTo(makeDims({6, 4})))->getOutput(0);
  ActivationParams sigmoid;
  sigmoid.type = ActivationType::kSIGMOID;
  ITensor* c = net->addActivation(*b, sigmoid)->getOutput(0);
  ITensor* d = net->addShuffle(*c, reshapeTo(makeDims({2, 3, 4})))->getOutput(0);
  ILayer* add = net->addElementwise(*a, *d, ElementwiseOp::kADD);
  add->getOutput(0)->setName("y");
  ASSERT_TRUE(net->markOutput(*add->getOutput(0)).isOk());

  std::vector<uint8_t> bytes;
  BuilderConfig config;
  config.timingRuns = 1;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, bytes);
  ASSERT_TRUE(s.isOk()) << s.toString();

  plan::Plan plan;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), plan).isOk());
  ASSERT_EQ(plan.steps.size(), 5u);
  // Each reshape reads and writes one range; the sigmoid's output lies elsewhere, since the add
  // still reads the relu's output (the reshape's input) after the sigmoid has run.
  const auto offset = [&](int32_t t) { return plan.tensors[size_t(t)].arenaOffset; };
  for (size_t s : {1u, 3u}) {
    ASSERT_EQ(plan.steps[s].type, LayerType::kSHUFFLE);
    EXPECT_EQ(plan.steps[s].tactic, "reference");
    EXPECT_EQ(offset(plan.steps[s].inputs[0]), offset(plan.steps[s].outputs[0]));
  }
  EXPECT_EQ(plan.tensors[size_t(plan.steps[1].outputs[0])].dims, makeDims({6, 4}));
  EXPECT_NE(offset(plan.steps[0].outputs[0]), offset(plan.steps[2].outputs[0]));

  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(bytes.data(), bytes.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> in(24), out(24, NAN);
  for (float& v : in) v = dist(rng);
  ASSERT_TRUE(ctx->setTensorAddress("x", in.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", out.data()).isOk());
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  for (size_t i = 0; i < in.size(); ++i) {
    const float r = std::max(in[i], 0.f);
    EXPECT_NEAR(out[i], r + 1.f / (1.f + std::exp(-r)), 1e-6f) << "element " << i;
  }
}

TEST(ReshapeAlias, AReshapeOfANetworkInputOrIntoAnOutputStaysACopy) {
  // x -> reshape -> y: both ends belong to the caller, so the copy is the step.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 6}));
  ILayer* r = net->addShuffle(*x, reshapeTo(makeDims({3, 4})));
  r->getOutput(0)->setName("y");
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  std::vector<uint8_t> bytes;
  BuilderConfig config;
  config.timingRuns = 1;
  ASSERT_TRUE(createBuilder()->buildSerializedNetwork(*net, config, bytes).isOk());
  plan::Plan plan;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), plan).isOk());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].type, LayerType::kSHUFFLE);
  EXPECT_EQ(plan.tensors[size_t(plan.steps[0].inputs[0])].kind, plan::TensorKind::kINPUT);
}

}  // namespace
}  // namespace kiln
