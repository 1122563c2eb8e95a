// transpose_motion: a leading-axis transpose moves across a row-wise product (a Linear, or a 2-D
// Gemm between reshapes, first made one Linear), and the plan computes what the unfused one does
// on random data; a product with a residual, or a transpose read twice, stays where it is; a
// flattened map and its transpose become one Shuffle. (The
// whole batch-first attention block is in attention_layout_test.cpp.)
#include <string>
#include <vector>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kS = 5, kB = 2, kE = 6, kN = 4;

ITensor* transposed(INetworkDefinition& net, ITensor& x, std::vector<int32_t> order) {
  ShuffleParams p;
  p.hasFirstTranspose = true;
  for (size_t i = 0; i < order.size(); ++i) p.firstTranspose[i] = order[i];
  return net.addShuffle(x, p)->getOutput(0);
}

ITensor* reshaped(INetworkDefinition& net, ITensor& x, const Dims& dims) {
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = dims;
  return net.addShuffle(x, p)->getOutput(0);
}

ITensor* projected(INetworkDefinition& net, ITensor& x, Rng& rng) {
  ITensor* y = net.addMatrixMultiply(x, *constant(net, makeDims({kE, kN}), rng.values(kE * kN)), {})
                   ->getOutput(0);
  return net
      .addElementwise(*y, *constant(net, makeDims({kN}), rng.values(kN)), ElementwiseOp::kADD)
      ->getOutput(0);
}

std::vector<std::string> layersOf(const Graph& g) {
  std::vector<std::string> layers;
  for (const GraphNode& n : g.nodes)
    if (n.type != LayerType::kCONSTANT) layers.push_back(layerTypeName(n.type));
  return layers;
}

std::vector<std::string> pipelineLog(const INetworkDefinition& net, Graph& g) {
  g = graphOf(net);
  std::vector<std::string> log;
  EXPECT_TRUE(passes::runPipeline(g, passes::defaultPipeline(), {}, &log).isOk());
  return log;
}

TEST(TransposeMotion, TransposeBeforeALinearMovesAfterIt) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kB, kS, kE}));
  ASSERT_TRUE(net->markOutput(*projected(*net, *transposed(*net, *x, {1, 0, 2}), rng)).isOk());
  Graph g;
  const auto log = pipelineLog(*net, g);
  EXPECT_EQ(layersOf(g), (std::vector<std::string>{"Linear", "Shuffle"})) << joined(log);
  EXPECT_EQ(g.tensors[size_t(g.nodes[0].inputs[0])].name, "x") << joined(log);
  EXPECT_TRUE(mentions(log, "pass transpose_motion: moved")) << joined(log);
  expectSameResults(*net, 1e-5f);
}

// x [S, B, E] -> Reshape [S B, E] -> Gemm -> Reshape [S, B, N] -> Transpose: one Linear over x's
// rows, and the transpose before it.
TEST(TransposeMotion, GemmBetweenReshapesBecomesALinearTheTransposePassesThrough) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kS, kB, kE}));
  GemmParams gp;
  gp.transposeB = true;
  ITensor* y = net->addGemm(*reshaped(*net, *x, makeDims({kS * kB, kE})),
                            *constant(*net, makeDims({kN, kE}), rng.values(kN * kE)),
                            constant(*net, makeDims({kN}), rng.values(kN)), gp)
                   ->getOutput(0);
  ITensor* out = transposed(*net, *reshaped(*net, *y, makeDims({kS, kB, kN})), {1, 0, 2});
  ASSERT_TRUE(net->markOutput(*out).isOk());
  Graph g;
  const auto log = pipelineLog(*net, g);
  EXPECT_EQ(layersOf(g), (std::vector<std::string>{"Shuffle", "Linear"})) << joined(log);
  EXPECT_TRUE(mentions(log, "one Linear over the rows of 'x'")) << joined(log);
  expectSameResults(*net, 1e-5f);
}

TEST(TransposeMotion, ResidualProductsAndSharedTransposesStay) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kB, kS, kE}));
  ITensor* r = net->addInput("r", DataType::kFLOAT, makeDims({kS, kB, kN}));
  ITensor* t = transposed(*net, *x, {1, 0, 2});
  // A residual is added element by element in the Linear's own layout: it would need moving too.
  ITensor* withResidual =
      net->addElementwise(*projected(*net, *t, rng), *r, ElementwiseOp::kADD)->getOutput(0);
  ASSERT_TRUE(net->markOutput(*withResidual).isOk());
  // A second reader of the same transpose.
  ASSERT_TRUE(net->markOutput(*projected(*net, *t, rng)).isOk());
  Graph g;
  const auto log = pipelineLog(*net, g);
  EXPECT_FALSE(mentions(log, "pass transpose_motion: moved")) << joined(log);
  expectSameResults(*net, 1e-5f);
}

// A rank-4 map flattened and transposed to tokens (ViT's patch embedding) is one Shuffle, which
// CUDA's channels_last_copy can run on a channels-last map; the result is unchanged.
TEST(TransposeMotion, AFlattenedMapAndItsTransposeBecomeOneShuffle) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({kB, kE, 3, kS}));
  ITensor* tokens = transposed(*net, *reshaped(*net, *x, makeDims({0, 0, -1})), {0, 2, 1});
  ASSERT_TRUE(net->markOutput(*tokens).isOk());
  Graph g;
  const auto log = pipelineLog(*net, g);
  EXPECT_EQ(layersOf(g), (std::vector<std::string>{"Shuffle"})) << joined(log);
  EXPECT_TRUE(mentions(log, "into one Shuffle")) << joined(log);
  expectSameResults(*net, 0.f);
  // A transpose of a rank-3 tensor's reshape stays apart.
  auto other = createNetwork();
  ITensor* y = other->addInput("y", DataType::kFLOAT, makeDims({kB, kE, kS}));
  ASSERT_TRUE(other
                  ->markOutput(
                      *transposed(*other, *reshaped(*other, *y, makeDims({kB, kS, kE})), {0, 2, 1}))
                  .isOk());
  const auto kept = pipelineLog(*other, g);
  EXPECT_EQ(layersOf(g), (std::vector<std::string>{"Shuffle", "Shuffle"})) << joined(kept);
}

}  // namespace
}  // namespace kiln::testing
