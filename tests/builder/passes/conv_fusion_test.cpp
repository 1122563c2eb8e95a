// conv_fusion: a convolution and the bias add, residual add and activation after it become one
// Convolution with that epilogue, in each form CNN exports write (with and without the
// convolution's own bias, a bias added as [1,K,1,1], [K,1,1] or one value, either operand order;
// each activation), and the fused plan computes what the unfused network does on random data on
// the CPU. What must not fuse stays, with the reason in the log: an intermediate read twice or
// wanted as an output, an add that broadcasts along something other than channels, a residual
// added after the activation.
#include <string>
#include <vector>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kC = 3, kK = 4, kH = 6, kW = 5;

ITensor* add(INetworkDefinition& net, ITensor& a, ITensor& b) {
  return net.addElementwise(a, b, ElementwiseOp::kADD)->getOutput(0);
}

// A 3x3 (or 1x1) convolution of x [2, C, H, W] to [2, K, H, W], with its own bias or none.
ITensor* convolution(INetworkDefinition& net, Rng& rng, ITensor& x, bool ownBias,
                     bool oneByOne = false) {
  ConvolutionParams p = conv3x3(kK);
  if (oneByOne) {
    p.kernelH = p.kernelW = 1;
    p.padTop = p.padLeft = p.padBottom = p.padRight = 0;
  }
  const int64_t taps = p.kernelH * p.kernelW;
  std::vector<float> w = rng.values(kK * kC * taps), b = rng.values(kK);
  return net
      .addConvolution(x, p, weights(w),
                      ownBias ? weights(b) : Weights{DataType::kFLOAT, nullptr, 0})
      ->getOutput(0);
}

const Dims kOut = makeDims({2, kK, kH, kW});

struct Form {
  const char* name;
  bool ownBias;
  int bias;       // 0 none, 1 [1,K,1,1], 2 [K,1,1] as the add's first operand, 3 one value [1]
  bool residual;  // an input of the output's shape
  bool hasActivation;
  ActivationType activation = ActivationType::kRELU;
  float alpha = 0.f, beta = 0.f;
  bool oneByOne = false;
};

TEST(ConvFusion, EveryPatternBecomesOneConvolution) {
  using A = ActivationType;
  const Form forms[] = {
      {"relu", true, 0, false, true, A::kRELU},
      {"residual_relu", true, 0, true, true, A::kRELU},  // a ResNet block's last convolution
      {"residual_only", true, 0, true, false},           // MobileNetV2's block output
      {"relu6", true, 0, false, true, A::kCLIP, 0.f, 6.f},
      {"hard_swish", true, 0, false, true, A::kHARD_SWISH},
      {"sigmoid", true, 0, false, true, A::kSIGMOID},
      {"leaky", true, 0, false, true, A::kLEAKY_RELU, 0.1f},
      {"silu", true, 0, false, true, A::kSILU},  // as silu_fusion makes it
      {"no_bias_residual_relu", false, 0, true, true, A::kRELU},
      {"added_bias_relu", false, 1, false, true, A::kRELU},
      {"added_bias_first_residual", false, 2, true, false},
      {"added_scalar_bias_tanh", false, 3, false, true, A::kTANH},
      {"one_by_one_residual_relu", true, 0, true, true, A::kRELU, 0.f, 0.f, true},
  };
  for (const Form& f : forms) {
    SCOPED_TRACE(f.name);
    Rng rng;
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, kC, kH, kW}));
    ITensor* y = convolution(*net, rng, *x, f.ownBias, f.oneByOne);
    if (f.bias == 1) y = add(*net, *y, *constant(*net, makeDims({1, kK, 1, 1}), rng.values(kK)));
    if (f.bias == 2) y = add(*net, *constant(*net, makeDims({kK, 1, 1}), rng.values(kK)), *y);
    if (f.bias == 3) y = add(*net, *y, *constant(*net, makeDims({1}), rng.values(1)));
    if (f.residual) y = add(*net, *net->addInput("r", DataType::kFLOAT, kOut), *y);
    if (f.hasActivation) y = activation(*net, *y, f.activation, f.alpha, f.beta);
    ASSERT_TRUE(net->markOutput(*y).isOk());

    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseConvolution, g);
    EXPECT_TRUE(mentions(c.changes(), "into one Convolution of 'x'")) << joined(c.changes());
    EXPECT_TRUE(c.declines().empty()) << joined(c.declines());
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 0);
    ASSERT_EQ(countNodes(g, LayerType::kCONVOLUTION), 1);
    const GraphNode& last = g.nodes.back();
    ASSERT_EQ(last.type, LayerType::kCONVOLUTION);
    const auto& p = std::get<ConvolutionParams>(last.params);
    EXPECT_EQ(p.hasResidual, f.residual);
    EXPECT_EQ(p.hasActivation, f.hasActivation);
    if (f.hasActivation) {
      EXPECT_EQ(p.activation, f.activation);
      EXPECT_EQ(p.activationAlpha, f.alpha);
      EXPECT_EQ(p.activationBeta, f.beta);
    }
    const bool hasBias = f.ownBias || f.bias != 0;
    EXPECT_EQ(last.inputs.size(), 2u + hasBias + f.residual);
    if (hasBias) {
      EXPECT_EQ(g.tensors[size_t(last.inputs[2])].shape.dims, makeDims({kK}));
    }
    EXPECT_EQ(g.tensors[size_t(last.outputs[0])].name, y->getName()) << "the output keeps its name";
    expectSameResults(*net, 1e-5f);
    if (HasFailure()) return;
  }
}

// A whole build of a ResNet basic block: conv-relu, conv + shortcut - relu is two convolutions,
// and the plan runs them.
TEST(ConvFusion, ResNetBlockIsTwoConvolutions) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, kK, kH, kW}));
  auto conv = [&](ITensor& in) {
    std::vector<float> w = rng.values(kK * kK * 9), b = rng.values(kK);
    return net->addConvolution(in, conv3x3(kK), weights(w), weights(b))->getOutput(0);
  };
  ITensor* h = activation(*net, *conv(*x), ActivationType::kRELU);
  ITensor* y = activation(*net, *add(*net, *conv(*h), *x), ActivationType::kRELU);
  ASSERT_TRUE(net->markOutput(*y).isOk());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  EXPECT_EQ(stepTypes(readPlan(bytes)),
            (std::vector<LayerType>{LayerType::kCONVOLUTION, LayerType::kCONVOLUTION}));
  expectSameResults(*net, 1e-5f);
}

// x -> convolution -> steps, each case with one thing that keeps (part of) the chain from fusing.
TEST(ConvFusion, WhatMustNotFuseStays) {
  struct Case {
    const char* name;
    int elementwise;      // Elementwise layers left
    int activations;      // Activation layers left
    bool fused;           // whether the pass fused anything
    const char* decline;  // in the declines ("" for none)
  };
  const Case cases[] = {
      {"two_readers", 1, 2, false, "'conv' is read by more than one layer"},
      {"intermediate_output", 0, 1, true, "'summed' is a network output"},
      {"add_per_row", 2, 1, false, ""},
      {"residual_after_activation", 1, 0, true, ""},
      {"second_bias_after_own", 2, 1, false, ""},
      {"conv_alone", 0, 0, false, ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string v = k.name;
    Rng rng;
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, kC, kH, kW}));
    ITensor* y = convolution(*net, rng, *x, true);
    y->setName("conv");
    ITensor* r = v == "conv_alone" ? nullptr : net->addInput("r", DataType::kFLOAT, kOut);
    if (v == "two_readers") {
      ASSERT_TRUE(net->markOutput(*activation(*net, *y, ActivationType::kTANH)).isOk());
      y = activation(*net, *add(*net, *y, *r), ActivationType::kRELU);
    } else if (v == "intermediate_output") {
      y = add(*net, *y, *r);
      y->setName("summed");
      ASSERT_TRUE(net->markOutput(*y).isOk());
      y = activation(*net, *y, ActivationType::kRELU);
    } else if (v == "add_per_row") {
      // One value per row (H), not per channel: no bias, no residual.
      y = add(*net, *y, *constant(*net, makeDims({1, 1, kH, 1}), rng.values(kH)));
      y = activation(*net, *add(*net, *y, *r), ActivationType::kRELU);
    } else if (v == "residual_after_activation") {
      y = add(*net, *activation(*net, *y, ActivationType::kRELU), *r);
    } else if (v == "second_bias_after_own") {
      // The convolution has its own bias: a per-channel add is no residual and no second bias.
      y = add(*net, *y, *constant(*net, makeDims({1, kK, 1, 1}), rng.values(kK)));
      y = activation(*net, *add(*net, *y, *r), ActivationType::kRELU);
    }
    ASSERT_TRUE(net->markOutput(*y).isOk());
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseConvolution, g);
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), k.elementwise) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), k.activations) << joined(c.changes());
    EXPECT_EQ(!c.changes().empty(), k.fused) << joined(c.changes());
    if (*k.decline) {
      EXPECT_TRUE(mentions(c.declines(), k.decline)) << joined(c.declines());
    } else {
      EXPECT_TRUE(c.declines().empty()) << joined(c.declines());
    }
    expectSameResults(*net, 1e-5f);
  }
}

}  // namespace
}  // namespace kiln::testing
