// elementwise_chain_fusion: a run of elementwise and activation layers (scalar and same-shape
// operands, either side) becomes one ElementwiseChain that computes what they did; a run read in
// the middle, a broadcast operand and a lone layer stay as they are.
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

TEST(ElementwiseChainFusion, ARunBecomesOneChain) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 8}));
  ITensor* r = net->addInput("r", DataType::kFLOAT, makeDims({2, 3, 8}));
  // relu(x + r) -> 2 - v -> v / r -> max(v, -1) -> tanh
  ITensor* v = activation(*net, *binary(*net, *x, *r, ElementwiseOp::kADD), ActivationType::kRELU);
  v = binary(*net, *scalar(*net, 2.f), *v, ElementwiseOp::kSUB);
  v = binary(*net, *v, *r, ElementwiseOp::kDIV);
  v = binary(*net, *v, *scalar(*net, -1.f), ElementwiseOp::kMAX);
  v = activation(*net, *v, ActivationType::kTANH);
  ASSERT_TRUE(net->markOutput(*v).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseElementwiseChains, g);
  EXPECT_TRUE(mentions(c.changes(), "6 elementwise and activation layers ending in"))
      << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 0);
  ASSERT_EQ(countNodes(g, LayerType::kELEMENTWISE_CHAIN), 1);
  const GraphNode& chain = g.nodes.back();
  const auto& p = std::get<ElementwiseChainParams>(chain.params);
  EXPECT_EQ(p.steps, 6);
  EXPECT_EQ(g.tensors[size_t(chain.outputs[0])].name, v->getName()) << "the output keeps its name";
  expectSameResults(*net, 1e-5f);
}

TEST(ElementwiseChainFusion, WhatMustStayStays) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  ITensor* bias = net->addInput("bias", DataType::kFLOAT, makeDims({8}));
  // A broadcast operand is no step: x + bias stays, and so does the lone relu after it.
  ITensor* a =
      activation(*net, *binary(*net, *x, *bias, ElementwiseOp::kADD), ActivationType::kRELU);
  ASSERT_TRUE(net->markOutput(*a).isOk());
  // sigmoid(x) * 3 + 1, with the middle value wanted too: the run splits there.
  ITensor* s = binary(*net, *activation(*net, *x, ActivationType::kSIGMOID), *scalar(*net, 3.f),
                      ElementwiseOp::kMUL);
  ITensor* t = binary(*net, *s, *scalar(*net, 1.f), ElementwiseOp::kADD);
  ASSERT_TRUE(net->markOutput(*s).isOk());
  ASSERT_TRUE(net->markOutput(*t).isOk());
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseElementwiseChains, g);
  // sigmoid then * 3 fuse (ending at the wanted tensor); + 1 alone stays.
  EXPECT_EQ(c.changes().size(), 1u) << joined(c.changes());
  EXPECT_TRUE(mentions(c.changes(), "2 elementwise and activation layers")) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE_CHAIN), 1);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 2);  // x + bias, and + 1
  EXPECT_EQ(countNodes(g, LayerType::kACTIVATION), 1);   // the relu
  expectSameResults(*net, 1e-5f);
}

}  // namespace
}  // namespace kiln::testing
