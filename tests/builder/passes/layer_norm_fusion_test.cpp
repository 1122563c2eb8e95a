// layer_norm_fusion: LayerNorm written out as exporters before opset 17 write it (mean, subtract,
// square, mean, add epsilon, square root, divide, scale, shift) becomes one LayerNormalization;
// reductions over other dims, and chains whose intermediates are used elsewhere, stay.
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

ITensor* meanOver(INetworkDefinition& net, ITensor& x, uint32_t mask) {
  return net.addReduce(x, ReduceParams{ReduceOp::kMEAN, mask, true})->getOutput(0);
}

struct WrittenOut {
  ITensor* y;
  ITensor* deviation;  // x - mean(x)
};

// The opset-13 LayerNorm of x over the dims in `mask`, with gamma and beta over the last dim of
// size `c` (no gamma when `withGamma` is false: a scale of ones, which exporters leave out once
// identity elimination has removed it).
WrittenOut writtenOutLayerNorm(INetworkDefinition& net, ITensor& x, uint32_t mask, int64_t c,
                               bool withGamma, Rng& rng) {
  ITensor* d = binary(net, x, *meanOver(net, x, mask), ElementwiseOp::kSUB);
  ITensor* sq = binary(net, *d, *constant(net, makeDims({}), {2.f}), ElementwiseOp::kPOW);
  ITensor* v = binary(net, *meanOver(net, *sq, mask), *constant(net, makeDims({}), {1e-5f}),
                      ElementwiseOp::kADD);
  ILayer* root = net.addActivation(*v, ActivationParams{ActivationType::kSQRT});
  ITensor* n = binary(net, *d, *root->getOutput(0), ElementwiseOp::kDIV);
  if (withGamma)
    n = binary(net, *n, *constant(net, makeDims({c}), rng.floats(c, 0.5f, 2.f)),
               ElementwiseOp::kMUL);
  ITensor* y = binary(net, *constant(net, makeDims({c}), rng.values(c)), *n, ElementwiseOp::kADD);
  return {y, d};
}

TEST(LayerNormFusion, TheWrittenOutFormBecomesOneLayer) {
  for (bool withGamma : {true, false}) {
    SCOPED_TRACE(withGamma ? "with gamma" : "without gamma");
    Rng rng;
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 5, 24}));
    ILayer* before = net->addActivation(*x, ActivationParams{ActivationType::kTANH});
    ITensor* y = writtenOutLayerNorm(*net, *before->getOutput(0), 0b100, 24, withGamma, rng).y;
    ASSERT_TRUE(net->markOutput(*y).isOk());
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseLayerNorm, g);
    EXPECT_TRUE(mentions(c.changes(), "into one LayerNormalization")) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kLAYER_NORMALIZATION), 1);
    EXPECT_EQ(countNodes(g, LayerType::kREDUCE), 0);
    EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
    const auto& p = std::get<LayerNormalizationParams>(g.nodes.back().params);
    EXPECT_EQ(p.axis, 2);
    EXPECT_FLOAT_EQ(p.epsilon, 1e-5f);
    expectSameResults(*net, 1e-5f);
  }
}

TEST(LayerNormFusion, TrailingDimsTogetherAndOtherDimsAlone) {
  Rng rng;
  {  // over the last two dims: axis 1
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({3, 4, 6}));
    ITensor* y = writtenOutLayerNorm(*net, *x, 0b110, 6, true, rng).y;
    ASSERT_TRUE(net->markOutput(*y).isOk());
    Graph g = graphOf(*net);
    runPass(passes::fuseLayerNorm, g);
    ASSERT_EQ(countNodes(g, LayerType::kLAYER_NORMALIZATION), 1);
    EXPECT_EQ(std::get<LayerNormalizationParams>(g.nodes.back().params).axis, 1);
    expectSameResults(*net, 1e-5f);
  }
  {  // over the middle dim: not a LayerNorm of trailing dims
    auto net = createNetwork();
    ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({3, 4, 1}));
    ITensor* y = writtenOutLayerNorm(*net, *x, 0b010, 1, true, rng).y;
    ASSERT_TRUE(net->markOutput(*y).isOk());
    Graph g = graphOf(*net);
    PassContext c = runPass(passes::fuseLayerNorm, g);
    EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
    EXPECT_EQ(countNodes(g, LayerType::kLAYER_NORMALIZATION), 0);
  }
}

TEST(LayerNormFusion, AChainWhoseIntermediateIsUsedElsewhereStays) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 8}));
  const WrittenOut w = writtenOutLayerNorm(*net, *x, 0b10, 8, true, rng);
  ASSERT_TRUE(net->markOutput(*w.y).isOk());
  ASSERT_TRUE(net->markOutput(*w.deviation).isOk());  // x - mean(x) is wanted too
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::fuseLayerNorm, g);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_TRUE(mentions(c.declines(), "is read elsewhere too")) << joined(c.declines());
  expectSameResults(*net);
}

}  // namespace
}  // namespace kiln::testing
