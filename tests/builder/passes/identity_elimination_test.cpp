// identity_elimination: layers that do nothing are bypassed; what looks alike but moves data, and
// identities writing a network output that cannot move, stay.
#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

ActivationParams relu() { return ActivationParams{ActivationType::kRELU}; }

TEST(IdentityElimination, ReshapeToTheSameDimsIsBypassed) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
  ShuffleParams p;
  p.hasReshape = true;
  p.reshapeDims = makeDims({0, -1, 4});
  ILayer* same = net->addShuffle(*x, p);
  same->setName("same_dims");
  ILayer* r = net->addActivation(*same->getOutput(0), relu());
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(countNodes(g, LayerType::kSHUFFLE), 0);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.tensors[size_t(g.nodes[0].inputs[0])].name, "x") << "relu reads x directly";
  EXPECT_TRUE(mentions(c.changes(), "removed 'same_dims' (Shuffle)")) << joined(c.changes());
  EXPECT_EQ(graphOf(*net).nodes.size(), 2u) << "the network itself is not changed";
  expectSameResults(*net);
}

TEST(IdentityElimination, TransposesThatOnlyMoveUnitDimsAreIdentities) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 1, 3}));
  ShuffleParams moves;  // [2,1,3] -> [1,2,3] -> reshape [2,1,3]: no element moves
  moves.hasFirstTranspose = true;
  moves.firstTranspose[0] = 1, moves.firstTranspose[1] = 0, moves.firstTranspose[2] = 2;
  moves.hasReshape = true;
  moves.reshapeDims = makeDims({2, 1, 3});
  ILayer* a = net->addShuffle(*x, moves);
  a->setName("unit_dims_only");
  ITensor* y = net->addInput("y", DataType::kFLOAT, makeDims({2, 3, 4}));
  ShuffleParams reorders;  // [2,3,4] -> [2,4,3] -> reshape [2,3,4]: same dims, other order
  reorders.hasFirstTranspose = true;
  reorders.firstTranspose[0] = 0, reorders.firstTranspose[1] = 2, reorders.firstTranspose[2] = 1;
  reorders.hasReshape = true;
  reorders.reshapeDims = makeDims({2, 3, 4});
  ILayer* b = net->addShuffle(*y, reorders);
  b->setName("reorders");
  ILayer* ra = net->addActivation(*a->getOutput(0), relu());
  ILayer* rb = net->addActivation(*b->getOutput(0), relu());
  ASSERT_TRUE(net->markOutput(*ra->getOutput(0)).isOk());
  ASSERT_TRUE(net->markOutput(*rb->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(findNode(g, "unit_dims_only"), nullptr) << joined(c.changes());
  EXPECT_NE(findNode(g, "reorders"), nullptr) << "its transpose moves elements";
  expectSameResults(*net);
}

TEST(IdentityElimination, CastToItsOwnTypeIsBypassedOtherCastsStay) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({4, 5}));
  ILayer* same = net->addCast(*x, DataType::kFLOAT);
  same->setName("to_fp32");
  ILayer* half = net->addCast(*same->getOutput(0), DataType::kHALF);
  half->setName("to_fp16");
  ILayer* back = net->addCast(*half->getOutput(0), DataType::kFLOAT);
  ASSERT_TRUE(net->markOutput(*back->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(findNode(g, "to_fp32"), nullptr);
  EXPECT_NE(findNode(g, "to_fp16"), nullptr) << "a real conversion";
  EXPECT_TRUE(mentions(c.changes(), "it casts to fp32, the type it has")) << joined(c.changes());
  expectSameResults(*net);
}

TEST(IdentityElimination, NeutralElementwiseConstantsAreBypassed) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 3, 4, 4}));
  ITensor* zero = constant(*net, makeDims({1, 3, 1, 1}), {0.f, -0.f, 0.f});
  ITensor* one = constant(*net, makeDims({1}), {1.f});
  ITensor* t = x;
  int k = 0;
  auto add = [&](ITensor& a, ITensor& b, ElementwiseOp op) {
    ILayer* l = net->addElementwise(a, b, op);
    l->setName(("neutral" + std::to_string(k++)).c_str());
    return l->getOutput(0);
  };
  t = add(*t, *zero, ElementwiseOp::kADD);  // x + 0
  t = add(*zero, *t, ElementwiseOp::kADD);  // 0 + x
  t = add(*t, *zero, ElementwiseOp::kSUB);  // x - 0
  t = add(*t, *one, ElementwiseOp::kMUL);   // x * 1
  t = add(*one, *t, ElementwiseOp::kMUL);   // 1 * x
  t = add(*t, *one, ElementwiseOp::kDIV);   // x / 1
  ILayer* r = net->addActivation(*t, relu());
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0) << joined(c.changes());
  EXPECT_EQ(c.changes().size(), 6u);
  expectSameResults(*net);
}

TEST(IdentityElimination, ElementwiseThatComputesSomethingStays) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 3, 4}));
  ITensor* zero = constant(*net, makeDims({1, 3, 4}), std::vector<float>(12, 0.f));
  ITensor* one = constant(*net, makeDims({1}), {1.f});
  ITensor* half = constant(*net, makeDims({1}), {0.5f});
  ITensor* wide = constant(*net, makeDims({2, 1, 3, 4}), std::vector<float>(24, 0.f));
  std::vector<std::pair<ILayer*, const char*>> kept = {
      {net->addElementwise(*zero, *x, ElementwiseOp::kSUB), "0 - x negates"},
      {net->addElementwise(*one, *x, ElementwiseOp::kDIV), "1 / x is a reciprocal"},
      {net->addElementwise(*x, *half, ElementwiseOp::kADD), "adds 0.5"},
      {net->addElementwise(*x, *wide, ElementwiseOp::kADD), "broadcasts x to [2,1,3,4]"},
      {net->addElementwise(*x, *one, ElementwiseOp::kMAX), "max(x, 1) clamps"},
  };
  for (auto& [layer, why] : kept) {
    ASSERT_NE(layer, nullptr) << why;
    ILayer* r = net->addActivation(*layer->getOutput(0), relu());
    ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  }
  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 5) << joined(c.changes());
  EXPECT_TRUE(c.changes().empty());
}

TEST(IdentityElimination, DataMoversThatMoveNothingAreBypassed) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 4}));
  SliceParams all;
  all.starts = makeDims({0, 0, 0});
  all.steps = makeDims({1, 1, 1});
  all.outputDims = makeDims({2, 3, 4});
  ILayer* slice = net->addSlice(*x, all);
  ILayer* pad = net->addPadding(*slice->getOutput(0), PaddingParams{});
  TileParams once;
  once.repeats = makeDims({1, 1, 1});
  ILayer* tile = net->addTile(*pad->getOutput(0), once);
  ExpandParams own;
  own.shape = makeDims({2, 3, 4});
  ILayer* expand = net->addExpand(*tile->getOutput(0), own);
  ITensor* one[] = {expand->getOutput(0)};
  ILayer* concat = net->addConcatenation(one, 1, ConcatenationParams{1});
  ILayer* r = net->addActivation(*concat->getOutput(0), relu());
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  SliceParams part = all;  // every other element of the last axis: stays
  part.steps = makeDims({1, 1, 2});
  part.outputDims = makeDims({2, 3, 2});
  ILayer* strided = net->addSlice(*x, part);
  ILayer* r2 = net->addActivation(*strided->getOutput(0), relu());
  ASSERT_TRUE(net->markOutput(*r2->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_EQ(g.nodes.size(), 3u) << joined(c.changes());
  EXPECT_EQ(countNodes(g, LayerType::kSLICE), 1);
  expectSameResults(*net);
}

TEST(IdentityElimination, NetworkOutputMovesToTheLayerThatMakesItsInput) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ILayer* r = net->addActivation(*x, relu());
  r->setName("relu");
  ILayer* id = net->addCast(*r->getOutput(0), DataType::kFLOAT);
  id->setName("copy");
  id->getOutput(0)->setName("y");
  ASSERT_TRUE(net->markOutput(*id->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  ASSERT_EQ(g.nodes.size(), 1u);
  const GraphTensor& out = g.tensors[size_t(g.nodes[0].outputs[0])];
  EXPECT_EQ(out.name, "y");
  EXPECT_TRUE(out.isOutput);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensors[size_t(g.outputs[0])].name, "y");
  EXPECT_TRUE(mentions(c.changes(), "'relu' (Activation) now writes network output 'y'"))
      << joined(c.changes());

  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(*net, passes::defaultPipeline(), bytes).isOk());
  const plan::Plan p = readPlan(bytes);
  EXPECT_EQ(stepTypes(p), std::vector<LayerType>{LayerType::kACTIVATION});
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.tensors[size_t(p.outputs[0])].name, "y");
  expectSameResults(*net);
}

TEST(IdentityElimination, KeepsAnIdentityWhoseOutputCannotMove) {
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3}));
  ILayer* copy = net->addCast(*x, DataType::kFLOAT);  // output = a copy of the input
  copy->setName("copy_of_input");
  ASSERT_TRUE(net->markOutput(*copy->getOutput(0)).isOk());
  ILayer* r = net->addActivation(*x, relu());
  ASSERT_TRUE(net->markOutput(*r->getOutput(0)).isOk());
  ILayer* again = net->addCast(*r->getOutput(0), DataType::kFLOAT);  // both are outputs
  again->setName("copy_of_output");
  ASSERT_TRUE(net->markOutput(*again->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext c = runPass(passes::eliminateIdentities, g);
  EXPECT_NE(findNode(g, "copy_of_input"), nullptr);
  EXPECT_NE(findNode(g, "copy_of_output"), nullptr);
  EXPECT_TRUE(c.changes().empty()) << joined(c.changes());
  EXPECT_TRUE(mentions(c.declines(), "kept 'copy_of_input' (Reformat)")) << joined(c.declines());
  EXPECT_TRUE(mentions(c.declines(), "is a network input")) << joined(c.declines());
  EXPECT_TRUE(mentions(c.declines(), "is another network output")) << joined(c.declines());
  expectSameResults(*net);
}

}  // namespace
}  // namespace kiln::testing
