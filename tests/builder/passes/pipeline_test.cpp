// The pipeline: a fixed order of passes, run by every build on its own copy of the graph, each
// reporting in a verbose build what it changed (or that it changed nothing).
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass_test_util.h"

namespace kiln::passes_test {
namespace {

TEST(Pipeline, RunsThePassesInTheirOrder) {
  std::vector<std::string> names;
  for (const Pass& p : passes::defaultPipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"identity_elimination", "constant_folding",
                                             "dead_layer_elimination"}));
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
}  // namespace kiln::passes_test
