// silu_fusion: x * sigmoid(x), as exporters write nn.SiLU, becomes one SiLU activation in either
// operand order, and a convolution followed by it then fuses into one Convolution with a SiLU
// epilogue; a Sigmoid read elsewhere stays, and a product with another tensor's sigmoid is no SiLU.
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

ITensor* sigmoid(INetworkDefinition& net, ITensor& x) {
  return activation(net, x, ActivationType::kSIGMOID);
}

ITensor* mul(INetworkDefinition& net, ITensor& a, ITensor& b) {
  return binary(net, a, b, ElementwiseOp::kMUL);
}

TEST(SiluFusion, EitherOperandOrderBecomesOneSilu) {
  for (bool sigmoidFirst : {false, true}) {
    SCOPED_TRACE(sigmoidFirst ? "sigmoid(x) * x" : "x * sigmoid(x)");
    auto net = createNetwork();
    ITensor* in = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 8}));
    ITensor* x = activation(*net, *in, ActivationType::kTANH);
    ITensor* s = sigmoid(*net, *x);
    ITensor* y = sigmoidFirst ? mul(*net, *s, *x) : mul(*net, *x, *s);
    ASSERT_TRUE(net->markOutput(*y).isOk());

    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseSilu, g);
    EXPECT_TRUE(mentions(c.changes(), "the SiLU written out as Sigmoid and"))
        << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    ASSERT_EQ(countNodes(g, LayerType::kACTIVATION), 2);  // tanh, and the SiLU
    const GraphNode& last = g.nodes.back();
    ASSERT_EQ(last.type, LayerType::kACTIVATION);
    EXPECT_EQ(std::get<ActivationParams>(last.params).type, ActivationType::kSILU);
    EXPECT_EQ(g.tensors[size_t(last.inputs[0])].name, x->getName());
    EXPECT_EQ(g.tensors[size_t(last.outputs[0])].name, y->getName()) << "the output keeps its name";
    expectSameResults(*net, 1e-6f);
  }
}

// Conv -> Sigmoid -> Mul, an EfficientNet or YOLO block's convolution: after silu_fusion,
// conv_fusion takes the SiLU into the convolution's epilogue.
TEST(SiluFusion, AConvolutionThenSiluBecomesOneConvolution) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 6, 5}));
  const std::vector<float> w = rng.values(4 * 3 * 9), b = rng.values(4);
  ITensor* conv = net->addConvolution(*x, conv3x3(4), weights(w), weights(b))->getOutput(0);
  ITensor* y = mul(*net, *conv, *sigmoid(*net, *conv));
  ASSERT_TRUE(net->markOutput(*y).isOk());

  Graph g = graphOf(*net);
  runPass(passes::fuseSilu, g);
  PassContext c = runPass(passes::fuseConvolution, g);
  EXPECT_TRUE(mentions(c.changes(), "into one Convolution of 'x'")) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 0);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
  ASSERT_EQ(countNodes(g, LayerType::kCONVOLUTION), 1);
  const auto& p = std::get<ConvolutionParams>(g.nodes.back().params);
  EXPECT_TRUE(p.hasActivation);
  EXPECT_EQ(p.activation, ActivationType::kSILU);
  expectSameResults(*net, 1e-5f);
}

TEST(SiluFusion, ASigmoidReadElsewhereStays) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  ITensor* s = sigmoid(*net, *x);
  ASSERT_TRUE(net->markOutput(*mul(*net, *x, *s)).isOk());
  ASSERT_TRUE(net->markOutput(*s).isOk());  // the gate is wanted too
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseSilu, g);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_TRUE(mentions(c.declines(), "is read elsewhere too")) << joined(c.declines());
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 1);
  expectSameResults(*net);
}

TEST(SiluFusion, AProductWithAnotherTensorsSigmoidIsNoSilu) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  ITensor* z = net->addInput("z", DataType::kFLOAT, makeDims({4, 8}));
  ASSERT_TRUE(net->markOutput(*mul(*net, *x, *sigmoid(*net, *z))).isOk());  // a GLU-style gate
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseSilu, g);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 1);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 1);
}

}  // namespace
}  // namespace kiln::testing
