// constant_folding: built-in layers of constants are computed at build time and become
// constants; network outputs, layers with a non-constant input, results over the size limit,
// layers no CPU tactic takes and plugins are left to the plan.
#include "builder/passes/pass_test_util.h"
#include "kiln/plugins.h"

namespace kiln::testing {
namespace {

std::vector<float> floats(const GraphTensor& t) {
  std::vector<float> v(t.constant->size() / 4);
  std::memcpy(v.data(), t.constant->data(), v.size() * 4);
  return v;
}

TEST(ConstantFolding, LayersOfConstantsBecomeConstants) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ITensor* a = constant(*net, makeDims({2, 3}), {1, 2, 3, 4, 5, 6});
  ITensor* b = constant(*net, makeDims({3}), {10, 20, 30});
  ILayer* sum = net->addElementwise(*a, *b, ElementwiseOp::kADD);
  sum->setName("sum");
  sum->getOutput(0)->setName("sum_out");
  ShuffleParams t;  // then a transpose of the folded sum: chains fold in order
  t.hasFirstTranspose = true;
  t.firstTranspose[0] = 1, t.firstTranspose[1] = 0;
  t.hasReshape = true;
  t.reshapeDims = makeDims({2, 3});
  ILayer* moved = net->addShuffle(*sum->getOutput(0), t);
  moved->setName("moved");
  ILayer* use = net->addElementwise(*x, *moved->getOutput(0), ElementwiseOp::kMUL);
  use->setName("use");
  ASSERT_TRUE(net->markOutput(*use->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g);
  EXPECT_TRUE(mentions(c.changes(), "folded 'sum' (Elementwise add) into constant 'sum_out' [2,3]"))
      << joined(c.changes());
  EXPECT_TRUE(mentions(c.changes(), "folded 'moved' (Shuffle)")) << joined(c.changes());
  const GraphNode* u = findNode(g, "use");
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->type, LayerType::kELEMENTWISE) << "it reads x: not folded";
  const GraphTensor& folded = g.tensors[size_t(u->inputs[1])];
  ASSERT_TRUE(folded.constant);
  // [[11,22,33],[14,25,36]] transposed to [3,2], read as [2,3].
  EXPECT_EQ(floats(folded), (std::vector<float>{11, 14, 22, 25, 33, 36}));
  EXPECT_EQ(findNode(g, "sum")->type, LayerType::kCONSTANT);
  expectSameResults(*net);

  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  EXPECT_EQ(stepTypes(readPlan(bytes)), std::vector<LayerType>{LayerType::kELEMENTWISE});
}

TEST(ConstantFolding, IntegerShapeArithmeticFolds) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 5}));
  const std::vector<int64_t> idx = {1, 3};
  ILayer* i = net->addConstant(makeDims({2}), Weights{DataType::kINT64, idx.data(), 2});
  const std::vector<int64_t> one = {1};
  ILayer* o = net->addConstant(makeDims({1}), Weights{DataType::kINT64, one.data(), 1});
  ILayer* shifted = net->addElementwise(*i->getOutput(0), *o->getOutput(0), ElementwiseOp::kSUB);
  shifted->setName("shifted");
  ILayer* rows = net->addGather(*x, *shifted->getOutput(0), GatherParams{0});
  ASSERT_TRUE(net->markOutput(*rows->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g);
  const GraphNode* s = findNode(g, "shifted");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->type, LayerType::kCONSTANT) << joined(c.declines());
  const GraphTensor& t = g.tensors[size_t(s->outputs[0])];
  ASSERT_EQ(t.shape.type, DataType::kINT64);
  int64_t v[2];
  std::memcpy(v, t.constant->data(), 16);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 2);
  expectSameResults(*net);
}

TEST(ConstantFolding, NetworkOutputsAreComputedByThePlan) {
  auto net = createNetwork();
  ITensor* a = constant(*net, makeDims({2, 2}), {-1, 2, -3, 4});
  ILayer* r = net->addActivation(*a, ActivationParams{ActivationType::kRELU});
  r->setName("relu_of_constant");
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g);
  EXPECT_EQ(findNode(g, "relu_of_constant")->type, LayerType::kACTIVATION);
  EXPECT_TRUE(c.changes().empty());
  EXPECT_TRUE(mentions(c.declines(), "left 'relu_of_constant' (Activation) alone: its output "))
      << joined(c.declines());
  EXPECT_TRUE(mentions(c.declines(), "is a network output")) << joined(c.declines());

  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  Buffers out;
  ASSERT_TRUE(runPlan(bytes, {}, out).isOk());
  std::vector<float> y(4);
  std::memcpy(y.data(), out.begin()->second.data(), 16);
  EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4}));
}

TEST(ConstantFolding, ResultsOverTheSizeLimitStay) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 64}));
  ITensor* s = constant(*net, makeDims({1}), {2.f});
  ExpandParams big;
  big.shape = makeDims({1, 64});
  ILayer* e = net->addExpand(*s, big);
  e->setName("expand");
  e->getOutput(0)->setName("expand_out");
  ILayer* m = net->addElementwise(*x, *e->getOutput(0), ElementwiseOp::kMUL);
  ASSERT_TRUE(net->markOutput(*m->getOutput(0)).isOk());

  passes::PassLimits small;
  small.maxFoldElements = 63;
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g, small);
  EXPECT_EQ(findNode(g, "expand")->type, LayerType::kEXPAND);
  EXPECT_TRUE(mentions(c.declines(),
                       "left 'expand' (Expand) alone: its output 'expand_out' "
                       "[1,64] has more than 63 elements"))
      << joined(c.declines());

  passes::PassLimits fewBytes;
  fewBytes.maxFoldBytes = 255;
  Graph h = graphOf(*net);
  c = runPass(passes::foldConstants, h, fewBytes);
  EXPECT_EQ(findNode(h, "expand")->type, LayerType::kEXPAND);
  EXPECT_TRUE(mentions(c.declines(), "would take 256 bytes, more than 255"))
      << joined(c.declines());

  Graph k = graphOf(*net);
  c = runPass(passes::foldConstants, k);  // the real limits: 2^26 elements, 256 MiB
  EXPECT_EQ(findNode(k, "expand")->type, LayerType::kCONSTANT);
}

TEST(ConstantFolding, LayersNoCpuTacticTakesOrThatFailStay) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kHALF, makeDims({3}));
  const std::vector<uint16_t> h = {floatToHalf(1.f), floatToHalf(2.f), floatToHalf(3.f)};
  ILayer* a = net->addConstant(makeDims({3}), Weights{DataType::kHALF, h.data(), 3});
  ILayer* twice = net->addElementwise(*a->getOutput(0), *a->getOutput(0), ElementwiseOp::kADD);
  twice->setName("fp16_add");
  ILayer* y = net->addElementwise(*x, *twice->getOutput(0), ElementwiseOp::kMUL);
  ASSERT_TRUE(net->markOutput(*y->getOutput(0)).isOk());

  ITensor* table = constant(*net, makeDims({2, 2}), {1, 2, 3, 4});
  const std::vector<int32_t> bad = {5};
  ILayer* i = net->addConstant(makeDims({1}), Weights{DataType::kINT32, bad.data(), 1});
  ILayer* gather = net->addGather(*table, *i->getOutput(0), GatherParams{0});
  gather->setName("out_of_range");
  ITensor* z = net->addInput("z", DataType::kFLOAT, makeDims({1, 2}));
  ILayer* w = net->addElementwise(*z, *gather->getOutput(0), ElementwiseOp::kADD);
  ASSERT_TRUE(net->markOutput(*w->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g);
  EXPECT_EQ(findNode(g, "fp16_add")->type, LayerType::kELEMENTWISE);
  EXPECT_TRUE(mentions(c.declines(),
                       "left 'fp16_add' (Elementwise add) alone: no CPU tactic "
                       "takes it: "))
      << joined(c.declines());
  EXPECT_EQ(findNode(g, "out_of_range")->type, LayerType::kGATHER);
  EXPECT_TRUE(mentions(c.declines(), "left 'out_of_range' (Gather) alone: "))
      << joined(c.declines());

  // The bad index is then reported as it would be without the passes: when the builder times
  // the gather, naming it.
  std::vector<uint8_t> bytes;
  Status folded = build(*net, passes::defaultPipeline(), bytes);
  Status plain = build(*net, {}, bytes);
  EXPECT_FALSE(folded.isOk());
  EXPECT_EQ(folded.toString(), plain.toString());
  EXPECT_NE(folded.message().find("layer 'out_of_range' (Gather)"), std::string::npos)
      << folded.toString();
}

TEST(ConstantFolding, PluginsAreNotEvaluated) {
  static const Status registered = PluginRegistry::global().registerLibrary(
      *getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath());
  ASSERT_TRUE(registered.isOk()) << registered.toString();
  auto net = createNetwork();
  ITensor* image = constant(*net, makeDims({1, 1, 4, 4}), std::vector<float>(16, 0.5f));
  ITensor* boxes = constant(*net, makeDims({1, 1, 4}), {0.f, 0.f, 1.f, 1.f});
  const int32_t size = 2;
  PluginField fields[] = {{"crop_height", &size, PluginFieldType::kINT32, 1},
                          {"crop_width", &size, PluginFieldType::kINT32, 1}};
  PluginSpec spec;
  spec.name = "CropAndResize";
  spec.fields = PluginFieldCollection{2, fields};
  ITensor* in[] = {image, boxes};
  ILayer* crop = net->addPlugin(in, 2, spec);
  ASSERT_NE(crop, nullptr) << net->getLastError().toString();
  ILayer* r = net->addActivation(*crop->getOutput(0), ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::foldConstants, g);
  EXPECT_EQ(countNodes(g, LayerType::kPLUGIN), 1);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
}

TEST(ConstantFolding, VerboseBuildSaysWhatWasFolded) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({3}));
  ITensor* a = constant(*net, makeDims({3}), {1, 2, 3});
  ILayer* n = net->addActivation(*a, ActivationParams{ActivationType::kNEG});
  n->setName("negated");
  n->getOutput(0)->setName("negated_out");
  ILayer* y = net->addElementwise(*x, *n->getOutput(0), ElementwiseOp::kADD);
  ASSERT_TRUE(net->markOutput(*y->getOutput(0)).isOk());
  LogCapture log;
  BuilderConfig config = quickConfig();
  config.verbose = true;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(createBuilder()->buildSerializedNetwork(*net, config, bytes).isOk());
  const std::string text = log.text();
  EXPECT_NE(text.find("pass constant_folding: folded 'negated' (Activation) into constant "
                      "'negated_out' [3]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pass dead_layer_elimination: removed constant layer "), std::string::npos)
      << text;
}

}  // namespace
}  // namespace kiln::testing
