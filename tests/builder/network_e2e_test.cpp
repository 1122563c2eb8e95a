// Every built-in layer through the whole path (network API -> builder -> plan bytes -> runtime ->
// context) against the layer's reference kernel run directly on the same data. This checks the
// wiring (bindings, constants, reformats, memory plan), not the kernels (tests/ops does that).
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "backends/cpu/kernel.h"
#include "kiln/float16.h"
#include "kiln/kiln.h"
#include "ops/op_table.h"

namespace kiln::testing {
namespace {

struct Case {
  std::string name;
  LayerType type;
  LayerParams params;
  std::vector<Dims> inputs;
  // Adds the layer to the network; constants (weights) are given by the harness.
  std::function<ILayer*(INetworkDefinition&, std::vector<ITensor*>&)> add;
};

std::vector<float> randomValues(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

// Runs the reference tactic of `type` on fp32 linear buffers.
std::vector<float> reference(LayerType type, const LayerParams& params,
                             const std::vector<Dims>& inDims,
                             const std::vector<std::vector<float>>& in, const Dims& outDims) {
  KernelConfig config;
  config.type = type;
  config.params = params;
  for (const Dims& d : inDims)
    config.inputs.push_back({d, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU});
  config.outputs.push_back({outDims, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU});
  config.constantInputs.assign(in.size(), nullptr);
  std::string why;
  auto kernel = ops::findTactic(ops::cpuTactics(type), "reference")->create(config, &why);
  EXPECT_TRUE(kernel) << why;
  if (!kernel) return {};
  std::vector<float> out(static_cast<size_t>(volume(outDims)));
  std::vector<uint8_t> workspace(kernel->workspaceSize() + 64);
  std::vector<const void*> ins;
  for (const auto& v : in) ins.push_back(v.data());
  void* outs[] = {out.data()};
  EXPECT_TRUE(kernel->run(ins.data(), outs, workspace.data(), {}).isOk());
  return out;
}

// Builds a one-layer network whose every input is a network input of `inputType`, runs it, and
// compares with the reference on the same (rounded) data.
void runCase(const Case& c, DataType inputType) {
  SCOPED_TRACE(c.name + " with " + dataTypeName(inputType) + " inputs");
  std::mt19937 rng(std::random_device{}());
  auto net = createNetwork();
  std::vector<ITensor*> tensors;
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    tensors.push_back(net->addInput(("in" + std::to_string(i)).c_str(), inputType, c.inputs[i]));
    values.push_back(randomValues(rng, volume(c.inputs[i])));
    if (inputType == DataType::kHALF) {
      for (float& v : values.back()) v = halfToFloat(floatToHalf(v));  // what the engine sees
    }
  }
  ILayer* layer = c.add(*net, tensors);
  ASSERT_NE(layer, nullptr) << net->getLastError().toString();
  layer->getOutput(0)->setName("out");
  ASSERT_TRUE(net->markOutput(*layer->getOutput(0)).isOk());
  const Dims outDims = layer->getOutput(0)->getDimensions();
  const DataType outType = layer->getOutput(0)->getType();

  std::vector<uint8_t> plan;
  BuilderConfig config;
  config.timingRuns = 1;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());

  std::vector<std::vector<uint16_t>> halves(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    void* p = values[i].data();
    if (inputType == DataType::kHALF) {
      for (float v : values[i]) halves[i].push_back(floatToHalf(v));
      p = halves[i].data();
    }
    ASSERT_TRUE(ctx->setTensorAddress(("in" + std::to_string(i)).c_str(), p).isOk());
  }
  const int64_t n = volume(outDims);
  std::vector<uint8_t> out(static_cast<size_t>(n) * dataTypeSize(outType));
  ASSERT_TRUE(ctx->setTensorAddress("out", out.data()).isOk());
  s = ctx->enqueue(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();

  const std::vector<float> want = reference(c.type, c.params, c.inputs, values, outDims);
  ASSERT_EQ(want.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float got;
    if (outType == DataType::kHALF) {
      got = halfToFloat(reinterpret_cast<const uint16_t*>(out.data())[i]);
    } else {
      got = reinterpret_cast<const float*>(out.data())[i];
    }
    const float expect = outType == DataType::kHALF ? halfToFloat(floatToHalf(want[i])) : want[i];
    const float tol = outType == DataType::kHALF ? 2e-3f * (1 + std::abs(expect))
                                                 : 1e-4f * (1 + std::abs(expect));
    ASSERT_NEAR(got, expect, tol) << "element " << i;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  // Convolution takes its weights as constants: see ConvolutionWithWeights below.
  PoolingParams pool;
  pool.type = PoolingType::kAVERAGE;
  pool.kernelH = pool.kernelW = 3;
  pool.strideH = pool.strideW = 2;
  pool.padTop = pool.padLeft = 1;
  all.push_back({"pooling",
                 LayerType::kPOOLING,
                 pool,
                 {makeDims({2, 3, 7, 6})},
                 [pool](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addPooling(*t[0], pool);
                 }});
  all.push_back({"elementwise broadcast",
                 LayerType::kELEMENTWISE,
                 ElementwiseParams{ElementwiseOp::kSUB},
                 {makeDims({2, 3, 4}), makeDims({3, 1})},
                 [](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addElementwise(*t[0], *t[1], ElementwiseOp::kSUB);
                 }});
  ActivationParams act{ActivationType::kHARD_SWISH};
  all.push_back({"activation",
                 LayerType::kACTIVATION,
                 act,
                 {makeDims({5, 7})},
                 [act](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addActivation(*t[0], act);
                 }});
  MatrixMultiplyParams mm{false, true};
  all.push_back({"matrix multiply",
                 LayerType::kMATRIX_MULTIPLY,
                 mm,
                 {makeDims({2, 3, 5}), makeDims({4, 5})},
                 [mm](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addMatrixMultiply(*t[0], *t[1], mm);
                 }});
  GemmParams gemm{0.5f, 2.f, true, false};
  all.push_back({"gemm",
                 LayerType::kGEMM,
                 gemm,
                 {makeDims({6, 3}), makeDims({6, 4}), makeDims({4})},
                 [gemm](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addGemm(*t[0], *t[1], t[2], gemm);
                 }});
  SoftmaxParams sm{0};
  all.push_back(
      {"softmax",
       LayerType::kSOFTMAX,
       sm,
       {makeDims({4, 3, 2})},
       [sm](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addSoftmax(*t[0], sm); }});
  ConcatenationParams cat{1};
  all.push_back({"concatenation",
                 LayerType::kCONCATENATION,
                 cat,
                 {makeDims({2, 3, 4}), makeDims({2, 1, 4})},
                 [cat](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addConcatenation(t.data(), 2, cat);
                 }});
  ShuffleParams sh;
  sh.hasFirstTranspose = true;
  sh.firstTranspose[0] = 2;
  sh.firstTranspose[1] = 0;
  sh.firstTranspose[2] = 1;
  sh.hasReshape = true;
  sh.reshapeDims = makeDims({4, -1});
  all.push_back(
      {"shuffle",
       LayerType::kSHUFFLE,
       sh,
       {makeDims({2, 3, 4})},
       [sh](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addShuffle(*t[0], sh); }});
  ReduceParams red{ReduceOp::kMEAN, 0b101u, false};
  all.push_back(
      {"reduce",
       LayerType::kREDUCE,
       red,
       {makeDims({3, 4, 5})},
       [red](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addReduce(*t[0], red); }});
  SoftmaxParams lsm{-1, true};
  all.push_back({"log-softmax",
                 LayerType::kSOFTMAX,
                 lsm,
                 {makeDims({3, 5})},
                 [lsm](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addSoftmax(*t[0], lsm);
                 }});
  all.push_back({"prelu",
                 LayerType::kELEMENTWISE,
                 ElementwiseParams{ElementwiseOp::kPRELU},
                 {makeDims({2, 3, 4}), makeDims({3, 1})},
                 [](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addElementwise(*t[0], *t[1], ElementwiseOp::kPRELU);
                 }});
  ActivationParams elu{ActivationType::kELU, 0.7f};
  all.push_back({"elu",
                 LayerType::kACTIVATION,
                 elu,
                 {makeDims({4, 5})},
                 [elu](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addActivation(*t[0], elu);
                 }});
  // Data movers: the builder keeps them in fp32 (they take any type, see lowering.cpp).
  SliceParams sl{makeDims({1, 3}), makeDims({1, -2}), makeDims({2, 2})};
  all.push_back(
      {"slice",
       LayerType::kSLICE,
       sl,
       {makeDims({3, 4})},
       [sl](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addSlice(*t[0], sl); }});
  PaddingParams pad;
  pad.mode = PaddingMode::kREFLECT;
  pad.before[1] = 2;
  pad.after[0] = 1;
  all.push_back({"padding",
                 LayerType::kPADDING,
                 pad,
                 {makeDims({2, 3})},
                 [pad](INetworkDefinition& n, std::vector<ITensor*>& t) {
                   return n.addPadding(*t[0], pad);
                 }});
  TileParams tile{makeDims({2, 1, 3})};
  all.push_back(
      {"tile",
       LayerType::kTILE,
       tile,
       {makeDims({2, 3, 1})},
       [tile](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addTile(*t[0], tile); }});
  ExpandParams ex{makeDims({2, 1, 4})};
  all.push_back(
      {"expand",
       LayerType::kEXPAND,
       ex,
       {makeDims({3, 1})},
       [ex](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addExpand(*t[0], ex); }});
  return all;
}

TEST(NetworkEndToEnd, EveryLayerMatchesItsReference) {
  for (const Case& c : cases()) runCase(c, DataType::kFLOAT);
}

// fp16 network inputs and outputs: the builder converts around fp32 layers.
TEST(NetworkEndToEnd, HalfInputsAreReformattedAroundLayers) {
  for (const Case& c : cases()) runCase(c, DataType::kHALF);
}

TEST(NetworkEndToEnd, ConvolutionWithWeights) {
  std::mt19937 rng(std::random_device{}());
  ConvolutionParams p;
  p.outChannels = 6;
  p.kernelH = 3;
  p.kernelW = 2;
  p.strideH = 2;
  p.padTop = p.padBottom = 1;
  p.dilationW = 2;
  const Dims x = makeDims({2, 4, 9, 8}), w = makeDims({6, 4, 3, 2}), b = makeDims({6});
  auto xv = randomValues(rng, volume(x)), wv = randomValues(rng, volume(w)),
       bv = randomValues(rng, 6);
  auto net = createNetwork();
  ITensor* in = net->addInput("x", DataType::kFLOAT, x);
  ILayer* conv = net->addConvolution(*in, p, Weights{DataType::kFLOAT, wv.data(), volume(w)},
                                     Weights{DataType::kFLOAT, bv.data(), 6});
  ASSERT_NE(conv, nullptr) << net->getLastError().toString();
  ILayer* relu = net->addActivation(*conv->getOutput(0), ActivationParams{ActivationType::kRELU});
  ASSERT_TRUE(net->markOutput(*relu->getOutput(0)).isOk());
  std::vector<uint8_t> plan;
  ASSERT_TRUE(createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan).isOk());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  const Dims od = relu->getOutput(0)->getDimensions();
  std::vector<float> y(static_cast<size_t>(volume(od)));
  ASSERT_TRUE(ctx->setTensorAddress("x", xv.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress(relu->getOutput(0)->getName(), y.data()).isOk());
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  auto want = reference(LayerType::kCONVOLUTION, p, {x, w, b}, {xv, wv, bv}, od);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], std::max(want[i], 0.f), 1e-4f) << i;
}

// Layers whose inputs or outputs are not float: comparisons and not give bool, select takes a
// bool condition, argmax gives int64, neg keeps int32. The builder must keep those types (no
// detour through fp32) while it still converts the fp16 inputs.
TEST(NetworkEndToEnd, BoolAndIntegerLayersKeepTheirTypes) {
  std::mt19937 rng(std::random_device{}());
  const Dims d = makeDims({3, 4});
  auto av = randomValues(rng, volume(d)), bv = randomValues(rng, volume(d));
  std::vector<uint16_t> ah, bh;
  for (size_t i = 0; i < av.size(); ++i) {
    ah.push_back(floatToHalf(av[i]));
    bh.push_back(floatToHalf(bv[i]));
    av[i] = halfToFloat(ah[i]);
    bv[i] = halfToFloat(bh[i]);
  }
  std::vector<int32_t> cv(static_cast<size_t>(volume(d)));
  for (size_t i = 0; i < cv.size(); ++i) cv[i] = static_cast<int32_t>(rng() % 2001) - 1000;

  auto net = createNetwork();
  ITensor* a = net->addInput("a", DataType::kHALF, d);
  ITensor* b = net->addInput("b", DataType::kHALF, d);
  ITensor* c = net->addInput("c", DataType::kINT32, d);
  ILayer* less = net->addElementwise(*a, *b, ElementwiseOp::kLESS);
  ASSERT_NE(less, nullptr) << net->getLastError().toString();
  ILayer* notLess = net->addActivation(*less->getOutput(0), ActivationParams{ActivationType::kNOT});
  ASSERT_NE(notLess, nullptr) << net->getLastError().toString();
  ILayer* same =
      net->addElementwise(*less->getOutput(0), *notLess->getOutput(0), ElementwiseOp::kEQUAL);
  ASSERT_NE(same, nullptr) << net->getLastError().toString();
  ILayer* pick = net->addSelect(*notLess->getOutput(0), *a, *b);  // max(a, b)
  ASSERT_NE(pick, nullptr) << net->getLastError().toString();
  ILayer* arg = net->addReduce(*a, ReduceParams{ReduceOp::kARGMAX, 0b10u, false});
  ASSERT_NE(arg, nullptr) << net->getLastError().toString();
  ILayer* neg = net->addActivation(*c, ActivationParams{ActivationType::kNEG});
  ASSERT_NE(neg, nullptr) << net->getLastError().toString();
  const char* names[] = {"same", "pick", "arg", "neg"};
  ILayer* outs[] = {same, pick, arg, neg};
  for (int i = 0; i < 4; ++i) {
    outs[i]->getOutput(0)->setName(names[i]);
    ASSERT_TRUE(net->markOutput(*outs[i]->getOutput(0)).isOk());
  }
  EXPECT_EQ(same->getOutput(0)->getType(), DataType::kBOOL);
  EXPECT_EQ(pick->getOutput(0)->getType(), DataType::kHALF);
  EXPECT_EQ(arg->getOutput(0)->getType(), DataType::kINT64);
  EXPECT_EQ(neg->getOutput(0)->getType(), DataType::kINT32);

  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<uint8_t> sameOut(12, 7);
  std::vector<uint16_t> pickOut(12);
  std::vector<int64_t> argOut(3, -1);
  std::vector<int32_t> negOut(12);
  ASSERT_TRUE(ctx->setTensorAddress("a", ah.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("b", bh.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("c", cv.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("same", sameOut.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("pick", pickOut.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("arg", argOut.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("neg", negOut.data()).isOk());
  s = ctx->enqueue(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(sameOut[i], 0) << i;  // x == !x never holds
    EXPECT_EQ(halfToFloat(pickOut[i]), std::max(av[i], bv[i])) << i;
    EXPECT_EQ(negOut[i], -cv[i]) << i;
  }
  for (size_t r = 0; r < 3; ++r) {
    int64_t best = 0;
    for (int64_t k = 1; k < 4; ++k)
      if (av[r * 4 + k] > av[r * 4 + best]) best = k;
    EXPECT_EQ(argOut[r], best) << r;
  }
}

TEST(NetworkEndToEnd, ShapeErrorsNameTheLayer) {
  auto net = createNetwork();
  ITensor* a = net->addInput("a", DataType::kFLOAT, makeDims({2, 3}));
  ITensor* b = net->addInput("b", DataType::kFLOAT, makeDims({4, 5}));
  EXPECT_EQ(net->addMatrixMultiply(*a, *b, {}), nullptr);
  EXPECT_NE(net->getLastError().message().find("MatrixMultiply"), std::string::npos)
      << net->getLastError().message();
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan);
  EXPECT_FALSE(s.isOk());
}

TEST(NetworkEndToEnd, NetworkWithoutOutputsIsRefused) {
  auto net = createNetwork();
  net->addInput("a", DataType::kFLOAT, makeDims({2}));
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

// Gather's indices stay int32 (no detour through fp32) while its fp16 data is converted.
TEST(NetworkEndToEnd, GatherKeepsIntegerIndices) {
  std::mt19937 rng(std::random_device{}());
  const Dims d = makeDims({4, 3});
  auto dv = randomValues(rng, volume(d));
  std::vector<uint16_t> dh;
  for (float& v : dv) {
    dh.push_back(floatToHalf(v));
    v = halfToFloat(dh.back());
  }
  std::vector<int32_t> iv = {3, -4, 1, 2, -1};
  auto net = createNetwork();
  ITensor* data = net->addInput("data", DataType::kHALF, d);
  ITensor* idx = net->addInput("idx", DataType::kINT32, makeDims({5}));
  ILayer* g = net->addGather(*data, *idx, GatherParams{0});
  ASSERT_NE(g, nullptr) << net->getLastError().toString();
  ASSERT_EQ(g->getOutput(0)->getDimensions(), makeDims({5, 3}));
  ASSERT_TRUE(net->markOutput(*g->getOutput(0)).isOk());
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, BuilderConfig(), plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<uint16_t> out(15);
  ASSERT_TRUE(ctx->setTensorAddress("data", dh.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("idx", iv.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress(g->getOutput(0)->getName(), out.data()).isOk());
  s = ctx->enqueue(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 3; ++c)
      ASSERT_EQ(halfToFloat(out[static_cast<size_t>(r * 3 + c)]),
                dv[static_cast<size_t>(((iv[static_cast<size_t>(r)] + 4) % 4) * 3 + c)])
          << r << "," << c;
  // An index out of range fails the enqueue instead of reading outside the data.
  std::vector<int32_t> bad = {0, 1, 4, 2, 3};
  ASSERT_TRUE(ctx->setTensorAddress("idx", bad.data()).isOk());
  EXPECT_FALSE(ctx->enqueue(nullptr).isOk());
}

}  // namespace
}  // namespace kiln::testing
