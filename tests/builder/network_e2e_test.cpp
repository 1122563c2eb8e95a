// Every built-in layer through the whole path (network API -> builder -> plan bytes -> runtime ->
// context) against the layer's reference kernel run directly on the same data. This checks the
// wiring (bindings, constants, reformats, memory plan), not the kernels (tests/ops_* do that).
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "backends/cpu/kernel.h"
#include "kiln/float16.h"
#include "kiln/kiln.h"

namespace kiln::test {
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
  cpu::KernelConfig config;
  config.type = type;
  config.params = params;
  for (const Dims& d : inDims) config.inputs.push_back({d, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU});
  config.outputs.push_back({outDims, DataType::kFLOAT, TensorFormat::kLINEAR, DeviceKind::kCPU});
  config.constantInputs.assign(in.size(), nullptr);
  std::string why;
  auto kernel = cpu::findTactic(type, "reference")->create(config, &why);
  EXPECT_TRUE(kernel) << why;
  if (!kernel) return {};
  std::vector<float> out(static_cast<size_t>(volume(outDims)));
  std::vector<uint8_t> workspace(kernel->workspaceSize() + 64);
  std::vector<const void*> ins;
  for (const auto& v : in) ins.push_back(v.data());
  void* outs[] = {out.data()};
  EXPECT_TRUE(kernel->run(ins.data(), outs, workspace.data()).isOk());
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
  all.push_back({"pooling", LayerType::kPOOLING, pool, {makeDims({2, 3, 7, 6})},
                 [pool](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addPooling(*t[0], pool); }});
  all.push_back({"elementwise broadcast", LayerType::kELEMENTWISE, ElementwiseParams{ElementwiseOp::kSUB},
                 {makeDims({2, 3, 4}), makeDims({3, 1})},
                 [](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addElementwise(*t[0], *t[1], ElementwiseOp::kSUB); }});
  ActivationParams act{ActivationType::kHARD_SWISH};
  all.push_back({"activation", LayerType::kACTIVATION, act, {makeDims({5, 7})},
                 [act](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addActivation(*t[0], act); }});
  MatrixMultiplyParams mm{false, true};
  all.push_back({"matrix multiply", LayerType::kMATRIX_MULTIPLY, mm, {makeDims({2, 3, 5}), makeDims({4, 5})},
                 [mm](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addMatrixMultiply(*t[0], *t[1], mm); }});
  GemmParams gemm{0.5f, 2.f, true, false};
  all.push_back({"gemm", LayerType::kGEMM, gemm, {makeDims({6, 3}), makeDims({6, 4}), makeDims({4})},
                 [gemm](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addGemm(*t[0], *t[1], t[2], gemm); }});
  SoftmaxParams sm{0};
  all.push_back({"softmax", LayerType::kSOFTMAX, sm, {makeDims({4, 3, 2})},
                 [sm](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addSoftmax(*t[0], sm); }});
  ConcatenationParams cat{1};
  all.push_back({"concatenation", LayerType::kCONCATENATION, cat, {makeDims({2, 3, 4}), makeDims({2, 1, 4})},
                 [cat](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addConcatenation(t.data(), 2, cat); }});
  ShuffleParams sh;
  sh.hasFirstTranspose = true;
  sh.firstTranspose[0] = 2;
  sh.firstTranspose[1] = 0;
  sh.firstTranspose[2] = 1;
  sh.hasReshape = true;
  sh.reshapeDims = makeDims({4, -1});
  all.push_back({"shuffle", LayerType::kSHUFFLE, sh, {makeDims({2, 3, 4})},
                 [sh](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addShuffle(*t[0], sh); }});
  ReduceParams red{ReduceOp::kMEAN, 0b101u, false};
  all.push_back({"reduce", LayerType::kREDUCE, red, {makeDims({3, 4, 5})},
                 [red](INetworkDefinition& n, std::vector<ITensor*>& t) { return n.addReduce(*t[0], red); }});
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
  auto xv = randomValues(rng, volume(x)), wv = randomValues(rng, volume(w)), bv = randomValues(rng, 6);
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

}  // namespace
}  // namespace kiln::test
