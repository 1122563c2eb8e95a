// dead_layer_elimination: what no network output needs goes (layers, plugins, constant layers
// and unread weights); network inputs and what the outputs need stay. Lowering itself builds
// everything it is given.
#include "builder/passes/pass_test_util.h"
#include "kiln/plugins.h"
#include "plugin/plugin_object.h"

namespace kiln::testing {
namespace {

void registerPlugins() {
  static const Status registered = PluginRegistry::global().registerLibrary(
      *getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath());
  ASSERT_TRUE(registered.isOk()) << registered.toString();
}

TEST(DeadLayerElimination, RemovesWhatNoOutputNeeds) {
  ASSERT_NO_FATAL_FAILURE(registerPlugins());
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  ITensor* unused = net->addInput("unused", DataType::kFLOAT, makeDims({3}));
  ASSERT_NE(unused, nullptr);
  ILayer* live = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  live->setName("live");
  ASSERT_TRUE(net->markOutput(*live->getOutput(0)).isOk());
  ILayer* dead = net->addConvolution(*x, conv3x3(2), weights(rng.values(36)), Weights{});
  dead->setName("dead_conv");
  ILayer* deadToo =
      net->addActivation(*dead->getOutput(0), ActivationParams{ActivationType::kTANH});
  deadToo->setName("dead_tanh");
  ITensor* c = constant(*net, makeDims({1}), {2.f});
  net->getLayer(net->getNbLayers() - 1)->setName("dead_constant");
  ASSERT_NE(net->addElementwise(*deadToo->getOutput(0), *c, ElementwiseOp::kMUL), nullptr);
  // A plugin nobody reads: removed from the builder's copy, its definition untouched.
  ITensor* boxes = constant(*net, makeDims({1, 1, 4}), {0.f, 0.f, 1.f, 1.f});
  const int32_t size = 2;
  PluginField fields[] = {{"crop_height", &size, PluginFieldType::kINT32, 1},
                          {"crop_width", &size, PluginFieldType::kINT32, 1}};
  PluginSpec spec;
  spec.name = "CropAndResize";
  spec.fields = PluginFieldCollection{2, fields};
  ITensor* in[] = {x, boxes};
  ILayer* crop = net->addPlugin(in, 2, spec);
  ASSERT_NE(crop, nullptr) << net->getLastError().toString();
  crop->setName("dead_crop");
  const std::shared_ptr<PluginObject> definition = findNode(graphOf(*net), "dead_crop")->plugin;
  const long owners = definition.use_count();

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::eliminateDeadLayers, g);
  ASSERT_EQ(g.nodes.size(), 1u) << joined(ctx.changes());
  EXPECT_EQ(g.nodes[0].name, "live");
  EXPECT_EQ(g.inputs.size(), 2u) << "inputs are bindings: they stay";
  for (const GraphTensor& t : g.tensors) EXPECT_FALSE(t.constant) << t.name << " is unread";
  EXPECT_TRUE(
      mentions(ctx.changes(), "removed 'dead_conv' (Convolution): no network output needs it"))
      << joined(ctx.changes());
  EXPECT_TRUE(mentions(ctx.changes(), "removed 'dead_crop' (Plugin)")) << joined(ctx.changes());
  EXPECT_TRUE(mentions(ctx.changes(), "removed constant layer 'dead_constant'"))
      << joined(ctx.changes());
  EXPECT_TRUE(mentions(ctx.changes(), "dropped constant 'Convolution_"))
      << "the conv's weights: " << joined(ctx.changes());
  EXPECT_EQ(definition.use_count(), owners) << "the pass neither kept nor cloned the definition";
  EXPECT_EQ(graphOf(*net).nodes.size(), 7u) << "the network keeps its layers";
}

TEST(DeadLayerElimination, KeepsAMultiOutputLayerIfOneOutputIsNeeded) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ILayer* r = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  Graph g = graphOf(*net);
  // Give the relu a second, unread output by hand (no built-in has one yet besides plugins).
  GraphTensor extra = g.tensors[size_t(g.nodes[0].outputs[0])];
  extra.name = "extra";
  extra.isOutput = false;
  g.tensors.push_back(extra);
  g.nodes[0].outputs.push_back(static_cast<int32_t>(g.tensors.size()) - 1);
  PassContext ctx = runPass(passes::eliminateDeadLayers, g);
  EXPECT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].outputs.size(), 2u);
  EXPECT_NE(findTensor(g, "extra"), -1);
  EXPECT_TRUE(ctx.changes().empty()) << joined(ctx.changes());
}

TEST(DeadLayerElimination, LoweringBuildsEverythingItIsGiven) {
  // Without the passes a dead layer is a step of the plan; with them it is not.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ILayer* r = net->addActivation(*x, ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  ASSERT_NE(net->addActivation(*x, ActivationParams{ActivationType::kSIGMOID}), nullptr);
  std::vector<uint8_t> plain, pruned;
  ASSERT_TRUE(build(*net, {}, plain).isOk());
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), pruned).isOk());
  EXPECT_EQ(readPlan(plain).steps.size(), 2u);
  EXPECT_EQ(stepTypes(readPlan(pruned)), std::vector<LayerType>{LayerType::kACTIVATION});
  expectSameResults(*net);
}

}  // namespace
}  // namespace kiln::testing
