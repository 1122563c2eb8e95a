// affine_folding: per-channel Mul/Div/Add/Sub by constants fold into the convolution or gemm
// before them (BatchNorm as Mul + Add in two steps); what does not fit stays, with a reason.
#include <cmath>

#include "builder/passes/pass_test_util.h"

namespace kiln::testing {
namespace {

struct ConvNet {
  std::unique_ptr<INetworkDefinition> net = createNetwork();
  ITensor* x = nullptr;
  ILayer* conv = nullptr;
};

// x [2,3,6,5] -> conv 3x3 (K channels, bias optional) named "conv".
ConvNet convNet(Rng& rng, int32_t k, bool bias, DataType type = DataType::kFLOAT) {
  ConvNet c;
  c.x = c.net->addInput("x", type, makeDims({2, 3, 6, 5}));
  auto w = rng.values(k * 3 * 9), b = rng.values(k);
  c.conv = c.net->addConvolution(*c.x, conv3x3(k), weights(w), bias ? weights(b) : Weights{});
  EXPECT_NE(c.conv, nullptr);
  c.conv->setName("conv");
  return c;
}

ILayer* elementwise(INetworkDefinition& net, ITensor& a, ITensor& b, ElementwiseOp op,
                    const char* name) {
  ILayer* l = net.addElementwise(a, b, op);
  EXPECT_NE(l, nullptr);
  l->setName(name);
  return l;
}

TEST(AffineFolding, BatchNormAsMulThenAddFoldsIntoTheConvolution) {
  Rng rng;
  ConvNet c = convNet(rng, 4, true);
  INetworkDefinition& net = *c.net;
  ITensor* scale = constant(net, makeDims({1, 4, 1, 1}), rng.values(4));
  ITensor* shift = constant(net, makeDims({1, 4, 1, 1}), rng.values(4));
  ILayer* mul = elementwise(net, *c.conv->getOutput(0), *scale, ElementwiseOp::kMUL, "bn_mul");
  ILayer* add = elementwise(net, *mul->getOutput(0), *shift, ElementwiseOp::kADD, "bn_add");
  add->getOutput(0)->setName("bn_out");
  ILayer* relu = net.addActivation(*add->getOutput(0), ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net.markOutput(*relu->getOutput(0)).isOk());

  Graph g = graphOf(net);
  PassContext ctx = runPass(passes::foldAffine, g);
  EXPECT_EQ(ctx.changes(), (std::vector<std::string>{
                               "folded 'bn_mul' (Elementwise mul) into convolution 'conv'",
                               "folded 'bn_add' (Elementwise add) into convolution 'conv'"}));
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0);
  const GraphNode* conv = findNode(g, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(g.tensors[size_t(conv->outputs[0])].name, "bn_out") << "downstream is unchanged";
  expectSameResults(net);

  std::vector<uint8_t> bytes;
  ASSERT_TRUE(build(net, passes::defaultPipeline(), bytes).isOk());
  const plan::Plan p = readPlan(bytes);
  EXPECT_EQ(stepTypes(p), (std::vector<LayerType>{LayerType::kCONVOLUTION}))
      << "BatchNorm folded, then the ReLU fused into the convolution (conv_fusion)";
  EXPECT_EQ(p.weights.size(), 2u) << "the folded kernel and bias; the BN constants are gone";
}

TEST(AffineFolding, FoldedWeightsAreComputedInDouble) {
  // One channel, known numbers: w' = w * s, b' = (b * s + t) / d - u.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 1, 2, 2}));
  ConvolutionParams p;
  p.outChannels = 1;
  const std::vector<float> w = {0.1f}, b = {0.3f};
  ILayer* conv = net->addConvolution(*x, p, weights(w), weights(b));
  conv->setName("conv");
  ITensor* t = conv->getOutput(0);
  t = elementwise(*net, *t, *constant(*net, makeDims({}), {3.f}), ElementwiseOp::kMUL, "m")
          ->getOutput(0);
  t = elementwise(*net, *t, *constant(*net, makeDims({1}), {0.7f}), ElementwiseOp::kADD, "a")
          ->getOutput(0);
  t = elementwise(*net, *t, *constant(*net, makeDims({1, 1, 1}), {7.f}), ElementwiseOp::kDIV, "d")
          ->getOutput(0);
  t = elementwise(*net, *t, *constant(*net, makeDims({1, 1, 1, 1}), {0.2f}), ElementwiseOp::kSUB,
                  "s")
          ->getOutput(0);
  ILayer* relu = net->addActivation(*t, ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*relu->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  ASSERT_EQ(ctx.changes().size(), 4u) << joined(ctx.changes()) << joined(ctx.declines());
  const GraphNode* c = findNode(g, "conv");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->inputs.size(), 3u);
  float wf, bf;
  std::memcpy(&wf, g.tensors[size_t(c->inputs[1])].constant->data(), 4);
  std::memcpy(&bf, g.tensors[size_t(c->inputs[2])].constant->data(), 4);
  // Each step rounds to float once, as the pass stores float between steps.
  const float w1 = float(double(0.1f) * 3.0), w2 = float(double(w1) / 7.0);
  const float b1 = float(double(0.3f) * 3.0), b2 = float(double(b1) + double(0.7f));
  const float b3 = float(double(b2) / 7.0), b4 = float(double(b3) - double(0.2f));
  EXPECT_EQ(wf, w2);
  EXPECT_EQ(bf, b4);
  expectSameResults(*net);
}

TEST(AffineFolding, FoldsThroughAReshapeThatKeepsBatchAndChannels) {
  // A 1-D convolution as the ONNX importer writes it: [N,K,1,W] reshaped to [N,K,W], then the
  // per-channel Mul and Add of a BatchNorm.
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({2, 3, 1, 8}));
  ConvolutionParams p;
  p.outChannels = 4;
  p.kernelW = 3;
  p.padLeft = p.padRight = 1;
  ILayer* conv = net->addConvolution(*x, p, weights(rng.values(36)), weights(rng.values(4)));
  conv->setName("conv");
  ShuffleParams to3d;
  to3d.hasReshape = true;
  to3d.reshapeDims = makeDims({2, 4, 8});
  ILayer* reshape = net->addShuffle(*conv->getOutput(0), to3d);
  reshape->setName("to_3d");
  ILayer* m =
      elementwise(*net, *reshape->getOutput(0), *constant(*net, makeDims({1, 4, 1}), rng.values(4)),
                  ElementwiseOp::kMUL, "mul");
  ILayer* a = elementwise(*net, *m->getOutput(0), *constant(*net, makeDims({4, 1}), rng.values(4)),
                          ElementwiseOp::kADD, "add");
  a->getOutput(0)->setName("y");
  ASSERT_TRUE(net->markOutput(*a->getOutput(0)).isOk());
  // A reshape that merges the channels into another axis keeps its Mul.
  ShuffleParams merged;
  merged.hasReshape = true;
  merged.reshapeDims = makeDims({2, 32});
  ILayer* conv2 = net->addConvolution(*x, p, weights(rng.values(36)), weights(rng.values(4)));
  conv2->setName("conv2");
  ILayer* flat = net->addShuffle(*conv2->getOutput(0), merged);
  ILayer* m2 = elementwise(*net, *flat->getOutput(0), *constant(*net, makeDims({1}), {2.f}),
                           ElementwiseOp::kMUL, "mul2");
  ASSERT_TRUE(net->markOutput(*m2->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  EXPECT_EQ(ctx.changes(),
            (std::vector<std::string>{
                "folded 'mul' (Elementwise mul) into convolution 'conv' through reshape 'to_3d'",
                "folded 'add' (Elementwise add) into convolution 'conv' through reshape 'to_3d'"}));
  EXPECT_EQ(g.tensors[size_t(findNode(g, "to_3d")->outputs[0])].name, "y");
  EXPECT_NE(findNode(g, "mul2"), nullptr);
  expectSameResults(*net);
}

TEST(AffineFolding, ConvolutionWithoutBiasGainsOne) {
  Rng rng;
  ConvNet c = convNet(rng, 3, false);
  ITensor* shift = constant(*c.net, makeDims({3, 1, 1}), rng.values(3));
  ILayer* add = elementwise(*c.net, *shift, *c.conv->getOutput(0), ElementwiseOp::kADD, "add");
  ILayer* r = c.net->addActivation(*add->getOutput(0), ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(c.net->markOutput(*r->getOutput(0)).isOk());

  Graph g = graphOf(*c.net);
  PassContext ctx = runPass(passes::foldAffine, g);
  ASSERT_EQ(ctx.changes().size(), 1u) << joined(ctx.declines());
  const GraphNode* conv = findNode(g, "conv");
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(g.tensors[size_t(conv->inputs[2])].shape.dims, makeDims({3}));
  expectSameResults(*c.net);
}

TEST(AffineFolding, FullyConnectedAndGemmFoldPerOutputColumn) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({3, 6}));
  ILayer* fc = net->addFullyConnected(*x, 4, weights(rng.values(24)), weights(rng.values(4)));
  fc->setName("fc");
  ILayer* m = elementwise(*net, *fc->getOutput(0), *constant(*net, makeDims({1, 4}), rng.values(4)),
                          ElementwiseOp::kMUL, "fc_mul");
  ILayer* a = elementwise(*net, *m->getOutput(0), *constant(*net, makeDims({4}), rng.values(4)),
                          ElementwiseOp::kADD, "fc_add");
  ASSERT_TRUE(net->markOutput(*a->getOutput(0)).isOk());
  // A gemm with B [K, N] (not transposed), alpha, beta and a one-value C.
  GemmParams gp;
  gp.alpha = 0.5f;
  gp.beta = 2.f;
  ITensor* bMat = constant(*net, makeDims({6, 5}), rng.values(30));
  ITensor* cVal = constant(*net, makeDims({1, 1}), rng.values(1));
  ILayer* gemm = net->addGemm(*x, *bMat, cVal, gp);
  gemm->setName("gemm");
  ILayer* d = elementwise(*net, *gemm->getOutput(0),
                          *constant(*net, makeDims({5}), rng.values(5, 0.5f, 2.f)),
                          ElementwiseOp::kDIV, "gemm_div");
  ILayer* s = elementwise(*net, *d->getOutput(0), *constant(*net, makeDims({}), rng.values(1)),
                          ElementwiseOp::kSUB, "gemm_sub");
  ASSERT_TRUE(net->markOutput(*s->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 0) << joined(ctx.declines());
  EXPECT_TRUE(mentions(ctx.changes(), "folded 'fc_add' (Elementwise add) into gemm 'fc'"));
  EXPECT_TRUE(mentions(ctx.changes(), "folded 'gemm_sub' (Elementwise sub) into gemm 'gemm'"));
  const GraphNode* gn = findNode(g, "gemm");
  EXPECT_EQ(std::get<GemmParams>(gn->params).beta, 1.f) << "beta went into C";
  EXPECT_EQ(std::get<GemmParams>(gn->params).alpha, 0.5f);
  expectSameResults(*net);
}

TEST(AffineFolding, LeavesAloneWhatDoesNotFitWithAReason) {
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  auto addConv = [&](const char* name) {
    ILayer* l =
        net->addConvolution(*x, conv3x3(2), weights(rng.values(2 * 2 * 9)), weights(rng.values(2)));
    l->setName(name);
    l->getOutput(0)->setName((std::string(name) + "_out").c_str());
    return l->getOutput(0);
  };
  auto output = [&](ITensor* t) { ASSERT_TRUE(net->markOutput(*t).isOk()); };
  // Not per channel: one value per pixel.
  ITensor* a = addConv("conv_pixels");
  output(elementwise(*net, *a, *constant(*net, makeDims({1, 1, 4, 4}), rng.values(16)),
                     ElementwiseOp::kMUL, "mul_pixels")
             ->getOutput(0));
  // Read twice.
  ITensor* b = addConv("conv_twice");
  output(elementwise(*net, *b, *constant(*net, makeDims({1, 2, 1, 1}), rng.values(2)),
                     ElementwiseOp::kMUL, "mul_twice")
             ->getOutput(0));
  output(net->addActivation(*b, ActivationParams{ActivationType::kRELU})->getOutput(0));
  // A network output itself.
  ITensor* c = addConv("conv_output");
  output(c);
  output(elementwise(*net, *c, *constant(*net, makeDims({1, 2, 1, 1}), rng.values(2)),
                     ElementwiseOp::kADD, "add_output")
             ->getOutput(0));
  // A zero divisor.
  ITensor* d = addConv("conv_zero");
  output(elementwise(*net, *d, *constant(*net, makeDims({1, 2, 1, 1}), {1.f, 0.f}),
                     ElementwiseOp::kDIV, "div_zero")
             ->getOutput(0));
  // Not finite.
  ITensor* e = addConv("conv_inf");
  output(elementwise(*net, *e, *constant(*net, makeDims({1}), {INFINITY}), ElementwiseOp::kMUL,
                     "mul_inf")
             ->getOutput(0));
  // The constant on the left of a Sub or Div is not affine in the same way: not a candidate.
  ITensor* f = addConv("conv_left");
  output(
      elementwise(*net, *constant(*net, makeDims({1}), {1.f}), *f, ElementwiseOp::kSUB, "sub_left")
          ->getOutput(0));

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  EXPECT_TRUE(ctx.changes().empty()) << joined(ctx.changes());
  EXPECT_EQ(countNodes(g, LayerType::kELEMENTWISE), 6);
  const std::string why = joined(ctx.declines());
  EXPECT_TRUE(mentions(ctx.declines(),
                       "left 'mul_pixels' (Elementwise mul) alone (not folded into "
                       "'conv_pixels' (Convolution)): its constant "))
      << why;
  EXPECT_TRUE(mentions(ctx.declines(), "[1,1,4,4] is not one value per output channel")) << why;
  EXPECT_TRUE(mentions(ctx.declines(), "'conv_twice_out' is read 2 times")) << why;
  EXPECT_TRUE(mentions(ctx.declines(), "'conv_output_out' is a network output")) << why;
  EXPECT_TRUE(mentions(ctx.declines(), "has a zero divisor")) << why;
  EXPECT_TRUE(mentions(ctx.declines(), "is not finite")) << why;
  EXPECT_FALSE(mentions(ctx.declines(), "sub_left")) << why;
  expectSameResults(*net);
}

TEST(AffineFolding, OnlyFp32IsFolded) {
  Rng rng;
  // FP32 activations, FP16 weights.
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  std::vector<uint16_t> w(2 * 2 * 9);
  const std::vector<float> wf = rng.values(int64_t(w.size()));
  for (size_t k = 0; k < w.size(); ++k) w[k] = floatToHalf(wf[k]);
  ILayer* conv =
      net->addConvolution(*x, conv3x3(2), Weights{DataType::kHALF, w.data(), 36}, Weights{});
  ASSERT_NE(conv, nullptr) << net->getLastError().toString();
  conv->setName("conv_fp16_weights");
  ILayer* m =
      elementwise(*net, *conv->getOutput(0), *constant(*net, makeDims({1, 2, 1, 1}), rng.values(2)),
                  ElementwiseOp::kMUL, "mul");
  ASSERT_TRUE(net->markOutput(*m->getOutput(0)).isOk());
  // FP16 activations and constants.
  ITensor* h = net->addInput("h", DataType::kHALF, makeDims({1, 2, 4, 4}));
  ILayer* conv16 =
      net->addConvolution(*h, conv3x3(2), Weights{DataType::kHALF, w.data(), 36}, Weights{});
  conv16->setName("conv_fp16");
  const std::vector<uint16_t> s = {floatToHalf(2.f), floatToHalf(3.f)};
  ILayer* sc = net->addConstant(makeDims({1, 2, 1, 1}), Weights{DataType::kHALF, s.data(), 2});
  ILayer* m16 =
      elementwise(*net, *conv16->getOutput(0), *sc->getOutput(0), ElementwiseOp::kMUL, "mul16");
  ASSERT_TRUE(net->markOutput(*m16->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  EXPECT_TRUE(ctx.changes().empty()) << joined(ctx.changes());
  EXPECT_TRUE(mentions(ctx.declines(),
                       "not folded into 'conv_fp16_weights' (Convolution)): only "
                       "FP32 layers and weights are folded into"))
      << joined(ctx.declines());
  EXPECT_TRUE(mentions(ctx.declines(), "not folded into 'conv_fp16' (Convolution)): only FP32"))
      << joined(ctx.declines());
}

TEST(AffineFolding, SharedWeightsAreCopiedNotChanged) {
  // Two convolutions reading one weight tensor (a constant layer): folding into one of them must
  // not change what the other computes.
  Rng rng;
  auto net = createNetwork();
  ITensor* x = net->addInput("x", DataType::kFLOAT, makeDims({1, 2, 4, 4}));
  ITensor* w = constant(*net, makeDims({2, 2, 3, 3}), rng.values(36));
  ILayer* a = net->addConvolution(*x, conv3x3(2), weights(rng.values(36)), Weights{});
  a->setName("conv_a");
  ILayer* b = net->addConvolution(*x, conv3x3(2), weights(rng.values(36)), Weights{});
  b->setName("conv_b");
  {
    // Point both at the shared constant through the graph (the API copies weights).
    Graph& g = const_cast<NetworkImpl*>(asNetworkImpl(*net))->mutableGraph();
    const int32_t wi = findTensor(g, w->getName());
    for (GraphNode& n : g.nodes)
      if (n.name == "conv_a" || n.name == "conv_b") n.inputs[1] = wi;
  }
  ILayer* m =
      elementwise(*net, *a->getOutput(0), *constant(*net, makeDims({1, 2, 1, 1}), rng.values(2)),
                  ElementwiseOp::kMUL, "mul_a");
  ASSERT_TRUE(net->markOutput(*m->getOutput(0)).isOk());
  ASSERT_TRUE(net->markOutput(*b->getOutput(0)).isOk());

  Graph g = graphOf(*net);
  PassContext ctx = runPass(passes::foldAffine, g);
  ASSERT_EQ(ctx.changes().size(), 1u) << joined(ctx.declines());
  const GraphNode *ca = findNode(g, "conv_a"), *cb = findNode(g, "conv_b");
  EXPECT_NE(ca->inputs[1], cb->inputs[1]) << "conv_a got its own copy";
  EXPECT_EQ(g.tensors[size_t(cb->inputs[1])].name, w->getName());
  expectSameResults(*net);
}

}  // namespace
}  // namespace kiln::testing
