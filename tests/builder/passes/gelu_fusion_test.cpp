// gelu_fusion: the five-layer GELU that exporters write before opset 20 becomes one GELU
// activation, in each of the forms they write; a chain whose intermediate is used elsewhere stays.
#include <cmath>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

ITensor* binary(INetworkDefinition& net, ITensor& a, ITensor& b, ElementwiseOp op,
                const char* name) {
  ILayer* l = net.addElementwise(a, b, op);
  l->setName(name);
  return l->getOutput(0);
}

// erf(x / sqrt(2)) + 1, as PyTorch writes it (or x * 1/sqrt(2) with `multiply`).
ITensor* erfPlusOne(INetworkDefinition& net, ITensor& x, bool multiply) {
  ITensor* d = multiply ? binary(net, *scalar(net, 0.70710678f), x, ElementwiseOp::kMUL, "scale")
                        : binary(net, x, *scalar(net, 1.41421354f), ElementwiseOp::kDIV, "scale");
  ILayer* erf = net.addActivation(*d, ActivationParams{ActivationType::kERF});
  erf->setName("erf");
  return binary(net, *erf->getOutput(0), *scalar(net, 1.f), ElementwiseOp::kADD, "plus_one");
}

TEST(GeluFusion, EveryExportedFormBecomesOneGelu) {
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE("form " + std::to_string(form));
    auto net = createNetwork();
    ITensor* in = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 16}));
    // A layer before, so that x is made by a layer (as a linear layer's output is).
    ILayer* before = net->addActivation(*in, ActivationParams{ActivationType::kTANH});
    ITensor* x = before->getOutput(0);
    ITensor* t = erfPlusOne(*net, *x, form == 2);
    ITensor* y = nullptr;
    if (form == 0) {  // (x * t) * 0.5: PyTorch's
      y = binary(*net, *binary(*net, *x, *t, ElementwiseOp::kMUL, "x_times"), *scalar(*net, 0.5f),
                 ElementwiseOp::kMUL, "half");
    } else {  // x * (t * 0.5), operands the other way round
      y = binary(*net, *binary(*net, *scalar(*net, 0.5f), *t, ElementwiseOp::kMUL, "half"), *x,
                 ElementwiseOp::kMUL, "x_times");
    }
    ASSERT_TRUE(net->markOutput(*y).isOk());

    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseGelu, g);
    EXPECT_TRUE(mentions(c.changes(), "written out as 5 layers ending in")) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 2);  // tanh, and the GELU
    const GraphNode& last = g.nodes.back();
    ASSERT_EQ(last.type, LayerType::kACTIVATION);
    EXPECT_EQ(std::get<ActivationParams>(last.params).type, ActivationType::kGELU);
    EXPECT_EQ(g.tensors[size_t(last.inputs[0])].name, x->getName());
    expectSameResults(*net, 1e-6f);
  }
}

TEST(GeluFusion, AChainWhoseIntermediateIsUsedElsewhereStays) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  ITensor* t = erfPlusOne(*net, *x, false);
  ITensor* y = binary(*net, *binary(*net, *x, *t, ElementwiseOp::kMUL, "x_times"),
                      *scalar(*net, 0.5f), ElementwiseOp::kMUL, "half");
  ASSERT_TRUE(net->markOutput(*y).isOk());
  ASSERT_TRUE(net->markOutput(*t).isOk());  // erf(x / sqrt(2)) + 1 is wanted too
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseGelu, g);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_TRUE(mentions(c.declines(), "is read elsewhere too")) << joined(c.declines());
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 4);
  expectSameResults(*net);
}

TEST(GeluFusion, OtherConstantsAreNotGelu) {
  // x * (erf(x / 2) + 1) * 0.5 is some other function.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({8}));
  ITensor* d = binary(*net, *x, *scalar(*net, 2.f), ElementwiseOp::kDIV, "scale");
  ILayer* erf = net->addActivation(*d, ActivationParams{ActivationType::kERF});
  ITensor* t = binary(*net, *erf->getOutput(0), *scalar(*net, 1.f), ElementwiseOp::kADD, "p");
  ITensor* y = binary(*net, *binary(*net, *x, *t, ElementwiseOp::kMUL, "m"), *scalar(*net, 0.5f),
                      ElementwiseOp::kMUL, "half");
  ASSERT_TRUE(net->markOutput(*y).isOk());
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseGelu, g);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 1);
}

}  // namespace
}  // namespace kiln::testing
