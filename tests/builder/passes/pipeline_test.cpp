// The pipeline: a fixed order of passes, run by every build on its own copy of the graph, each
// reporting in a verbose build what it changed (or that it changed nothing).
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

TEST(Pipeline, RunsThePassesInTheirOrder) {
  std::vector<std::string> names;
  for (const Pass& p : passes::defaultPipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "identity_elimination", "constant_folding", "affine_folding", "gelu_fusion",
                       "silu_fusion", "layer_norm_fusion", "attention_fusion", "linear_fusion",
                       "transpose_motion", "linear_residual_fusion", "conv_fusion",
                       "elementwise_chain_fusion", "attention_layout", "dead_layer_elimination"}));
}

TEST(Pipeline, VerboseBuildReportsEveryPass) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2, 5, 5}));
  ILayer* conv = net->addConvolution(*x, conv3x3(2), weights(rng.values(36)), Weights{});
  conv->setName("conv0");
  ILayer* mul =
      net->addElementwise(*conv->getOutput(0), *constant(*net, makeDims({1, 2, 1, 1}), {2.f, 3.f}),
                          ElementwiseOp::kMUL);
  mul->setName("bn_mul");
  ASSERT_TRUE(net->markOutput(*mul->getOutput(0)).isOk());
  const size_t layers = graphOf(*net).nodes.size();

  LogCapture log;
  BuilderConfig config = quickConfig();
  config.verbose = true;
  std::vector<uint8_t> bytes;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, bytes);
  ASSERT_TRUE(s.isOk()) << s.toString();
  const std::string text = log.text();
  EXPECT_NE(text.find("pass identity_elimination: no change\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pass constant_folding: no change\n"), std::string::npos) << text;
  EXPECT_NE(text.find("pass affine_folding: folded 'bn_mul' (Elementwise mul) into convolution "
                      "'conv0'\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pass dead_layer_elimination: removed constant layer 'Constant_"),
            std::string::npos)
      << text;
  // The passes come before lowering and tactic choice.
  EXPECT_LT(text.find("pass dead_layer_elimination"), text.find("layer 'conv0'")) << text;
  EXPECT_EQ(graphOf(*net).nodes.size(), layers) << "the network is not changed by a build";
  EXPECT_EQ(stepTypes(readPlan(bytes)), std::vector<LayerType>{LayerType::kCONVOLUTION});
}

TEST(Pipeline, QuietBuildLogsNothing) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  ILayer* id = net->addCast(*x, DataType::kFLOAT);
  ILayer* r = net->addActivation(*id->getOutput(0), ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  CapturingLogger logger;
  setLogger(&logger);  // the default severity (warnings) and no verbose flag
  std::vector<uint8_t> bytes;
  Status s = createBuilder()->buildSerializedNetwork(*net, quickConfig(), bytes);
  setLogger(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(logger.text(), "");
}

TEST(Pipeline, AFailingPassFailsTheBuildNamingIt) {
  static const Pass broken[] = {{"broken_pass", [](Graph& g, PassContext&) {
                                   // Leaves a node reading a tensor made after it.
                                   g.nodes[0].inputs[0] = g.nodes[1].outputs[0];
                                   return passes::GraphEditor(g).compact();
                                 }}};
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2}));
  ILayer* a = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  ILayer* b = net->addActivation(*a->getOutput(0), ActivationParams{ActivationType::kTANH});
  ASSERT_TRUE(net->markOutput(*b->getOutput(0)).isOk());
  std::vector<uint8_t> bytes;
  Status s = build(*net, broken, bytes);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("builder pass broken_pass"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::testing
