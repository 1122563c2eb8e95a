// Models with symbolic input dims parsed with optimization profiles (OnnxParserOptions::profiles):
// the inputs stay dynamic, named after their dim_params; shape arithmetic is made shape-generic
// from the profiles' corners (a reshape dim that changes becomes 0 or -1), and what kiln cannot
// carry to run time is refused naming the node and its values at the corners.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <limits>

#include "core/tensor_shape.h"
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

void initFloatScalar(Model& m, const std::string& name, float v) {
  auto* t = m.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

OptimizationProfile profile(const std::map<std::string, std::array<Dims, 3>>& shapes) {
  OptimizationProfile p;
  for (const auto& [name, d] : shapes) {
    p.setDimensions(name.c_str(), OptProfileSelector::kMIN, d[0]);
    p.setDimensions(name.c_str(), OptProfileSelector::kOPT, d[1]);
    p.setDimensions(name.c_str(), OptProfileSelector::kMAX, d[2]);
  }
  return p;
}

OnnxParserOptions profiles(std::vector<OptimizationProfile> p) {
  OnnxParserOptions o;
  o.profiles = std::move(p);
  return o;
}

ILayer* layerNamed(INetworkDefinition& net, const std::string& name) {
  for (int32_t i = 0; i < net.getNbLayers(); ++i)
    if (name == net.getLayer(i)->getName()) return net.getLayer(i);
  return nullptr;
}

void expectMessage(const Status& s, StatusCode code, std::initializer_list<const char*> parts) {
  EXPECT_EQ(s.code(), code) << s.toString();
  for (const char* part : parts)
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.toString();
}

// x [N, 3, 8, 8] -> Conv 3x3 (4 channels, pads 1) -> Relu -> Flatten -> Gemm to 10.
Model convModel() {
  Model m(13);
  m.input("x", {1, 3, 8, 8});
  symbolic(m, 0, 0, "N");
  m.initFloat("w", {4, 3, 3, 3}, std::vector<float>(4 * 27, 0.1f));
  attrInts(m.node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Flatten", {"r"}, {"f"}, "flatten");
  m.initFloat("g", {10, 256}, std::vector<float>(2560, 0.01f));
  attrInt(m.node("Gemm", {"f", "g"}, {"y"}, "gemm"), "transB", 1);
  m.output("y");
  return m;
}

TEST(OnnxProfiles, ADynamicBatchStaysDynamicAndTheFlattenIsGeneric) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      convModel(), net,
      profiles({profile(
          {{"x", {makeDims({1, 3, 8, 8}), makeDims({4, 3, 8, 8}), makeDims({8, 3, 8, 8})}}})}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(net->getNbInputs(), 1);
  ITensor* x = net->getInput(0);
  EXPECT_EQ(x->getDimensions(), makeDims({-1, 3, 8, 8}));
  ASSERT_NE(x->getDimensionName(0), nullptr);
  EXPECT_STREQ(x->getDimensionName(0), "N");
  EXPECT_EQ(x->getDimensionName(1), nullptr);
  ILayer* flatten = layerNamed(*net, "flatten");
  ASSERT_NE(flatten, nullptr);
  // At the working shape, profile 0's opt, again after the check at every corner.
  EXPECT_EQ(flatten->getOutput(0)->getDimensions(), makeDims({4, 256}));
  // A batch no corner has: the flatten copies it rather than keeping 4.
  ASSERT_TRUE(net->setWorkingShape("x", makeDims({2, 3, 8, 8})).isOk());
  EXPECT_EQ(flatten->getOutput(0)->getDimensions(), makeDims({2, 256}));
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({2, 10}));
}

// x [N, S, 128] viewed as [N, -1, 64] through Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
// as torch.onnx.export writes x.view(x.size(0), -1, 64).
Model viewModel() {
  Model m(13);
  m.input("x", {1, 1, 128});
  symbolic(m, 0, 0, "N");
  symbolic(m, 0, 1, "S");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0}, true);
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  m.initInts("axes", {0});
  m.node("Unsqueeze", {"n", "axes"}, {"n1"});
  m.initInts("rest", {-1, 64});
  attrInt(m.node("Concat", {"n1", "rest"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"v"}, "view");
  m.node("Relu", {"v"}, {"y"});
  m.output("y");
  return m;
}

TEST(OnnxProfiles, AShapeChainIntoAReshapeIsMadeGeneric) {
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(viewModel(), net,
            profiles({profile(
                {{"x", {makeDims({1, 1, 128}), makeDims({2, 4, 128}), makeDims({8, 16, 128})}}})}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(net->getInput(0)->getDimensions(), makeDims({-1, -1, 128}));
  EXPECT_STREQ(net->getInput(0)->getDimensionName(1), "S");
  ILayer* view = layerNamed(*net, "view");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->getOutput(0)->getDimensions(), makeDims({2, 8, 64}));
  ASSERT_TRUE(net->setWorkingShape("x", makeDims({3, 5, 128})).isOk());
  EXPECT_EQ(view->getOutput(0)->getDimensions(), makeDims({3, 10, 64}));
}

TEST(OnnxProfiles, ReshapesInsideOtherOpsAndExpandAreGeneric) {
  // x [N, 4, 6] -> Unsqueeze -> Squeeze -> 1-D Conv (its [N, C, 1, L] view and back) -> MatMul
  // with a 1-D operand (the added dim removed again) -> Expand to [N, 2] through Shape ->
  // Flatten at axis 0 ([1, 2N]: the one dim left to infer).
  Model m(13);
  m.input("x", {1, 4, 6});
  symbolic(m, 0, 0, "N");
  m.initInts("axis1", {1});
  m.node("Unsqueeze", {"x", "axis1"}, {"u"});
  m.node("Squeeze", {"u", "axis1"}, {"q"});
  m.initFloat("w", {2, 4, 3}, std::vector<float>(24, 0.5f));
  m.node("Conv", {"q", "w"}, {"c"}, "conv");
  m.initFloat("v", {4}, {1.f, 2.f, 3.f, 4.f});
  m.node("MatMul", {"c", "v"}, {"mm"}, "matmul");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0});
  m.node("Slice", {"shape", "zero", "axis1"}, {"n"});
  m.initInts("two", {2});
  attrInt(m.node("Concat", {"n", "two"}, {"target"}), "axis", 0);
  m.node("Expand", {"mm", "target"}, {"e"}, "expand");
  attrInt(m.node("Flatten", {"e"}, {"y"}, "flatten"), "axis", 0);
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net,
                   profiles({profile(
                       {{"x", {makeDims({2, 4, 6}), makeDims({3, 4, 6}), makeDims({5, 4, 6})}}})}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({1, 6}));
  ASSERT_TRUE(net->setWorkingShape("x", makeDims({7, 4, 6})).isOk());
  EXPECT_EQ(layerNamed(*net, "conv")->getOutput(0)->getDimensions(), makeDims({7, 2, 4}));
  EXPECT_EQ(layerNamed(*net, "matmul")->getOutput(0)->getDimensions(), makeDims({7, 2}));
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({1, 14}));
}

// Builds `net` with `profiles` and runs it with input "x" at `shape`; `y` gets output "y".
Status buildAndRun(INetworkDefinition& net, const std::vector<OptimizationProfile>& profiles,
                   const Dims& shape, const std::vector<float>& x, Tensor& y) {
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.allowHalf = false;
  config.profiles = profiles;
  std::vector<uint8_t> plan;
  KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(net, config, plan));
  std::unique_ptr<IEngine> engine;
  KILN_RETURN_IF_ERROR(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine));
  std::unique_ptr<IExecutionContext> ctx;
  KILN_RETURN_IF_ERROR(engine->createExecutionContext(ctx));
  KILN_RETURN_IF_ERROR(ctx->setInputShape("x", shape));
  y.dims = ctx->getTensorShape("y");
  if (volume(y.dims) < 0) return internalError("output shape unknown");
  std::vector<float> in = x;
  y.v.assign(size_t(volume(y.dims)), 0.f);
  KILN_RETURN_IF_ERROR(ctx->setTensorAddress("x", in.data()));
  KILN_RETURN_IF_ERROR(ctx->setTensorAddress("y", y.v.data()));
  return ctx->enqueue(nullptr);
}

TEST(OnnxProfiles, TheGenericViewBuildsAndRunsAtShapesBetweenTheCorners) {
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 1, 128}), makeDims({2, 4, 128}), makeDims({8, 16, 128})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(viewModel(), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  Rng rng;
  for (const Dims& shape : {makeDims({3, 5, 128}), makeDims({8, 16, 128}), makeDims({1, 1, 128})}) {
    SCOPED_TRACE(std::to_string(shape.d[0]) + "x" + std::to_string(shape.d[1]));
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, makeDims({shape.d[0], shape.d[1] * 2, 64}));
    std::vector<float> want;
    for (float v : x) want.push_back(std::max(v, 0.f));
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

TEST(OnnxProfiles, TheConvModelRunsAsItsStaticParseDoes) {
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 3, 8, 8}), makeDims({4, 3, 8, 8}), makeDims({8, 3, 8, 8})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(convModel(), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  Rng rng;
  for (int64_t batch : {3, 8}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const Dims shape = makeDims({batch, 3, 8, 8});
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, makeDims({batch, 10}));
    OnnxParserOptions at;
    at.inputShapes = {{"x", shape}};
    std::map<std::string, Tensor> want;
    s = run(convModel(), {{"x", x}}, want, nullptr, at);
    ASSERT_TRUE(s.isOk()) << s.toString();
    expectNear(y.v, want["y"].v, 1e-5f, rng.seed);
  }
}

OptimizationProfile sharedBatchProfile() {
  const std::array<Dims, 3> range = {makeDims({1, 4}), makeDims({4, 4}), makeDims({8, 4})};
  return profile({{"a", range}, {"b", range}});
}

TEST(OnnxProfiles, InputsSharingASymbolAreCheckedAtEveryCorner) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(sharedBatchModel(), net, profiles({sharedBatchProfile()}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_STREQ(net->getInput(0)->getDimensionName(0), "batch");
  EXPECT_STREQ(net->getInput(1)->getDimensionName(0), "batch");
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({4, 2, 2}));
}

TEST(OnnxProfiles, InputsThatMustAgreeMoveTogether) {
  // a + b, both [batch, 4], with batch at least 2: neither input alone can leave the working
  // shape (a [2, 4] + b [4, 4] does not broadcast), so the corners are reached by moving both.
  const std::array<Dims, 3> range = {makeDims({2, 4}), makeDims({4, 4}), makeDims({8, 4})};
  const OptimizationProfile p = profile({{"a", range}, {"b", range}});
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(sharedBatchModel(), net, profiles({p}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_FALSE(net->setWorkingShape("a", makeDims({3, 4})).isOk());
  ASSERT_TRUE(net->setWorkingShapes({{"a", makeDims({3, 4})}, {"b", makeDims({3, 4})}}).isOk());
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({3, 2, 2}));
  // Built once, run at batch 3 against the sum.
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.profiles = {p};
  std::vector<uint8_t> plan;
  s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  if (pendingKernel(s)) GTEST_SKIP() << s.toString();
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  ASSERT_TRUE(ctx->setInputShape("a", makeDims({3, 4})).isOk());
  ASSERT_TRUE(ctx->setInputShape("b", makeDims({3, 4})).isOk());
  EXPECT_EQ(ctx->getTensorShape("y"), makeDims({3, 2, 2}));
  Rng rng;
  std::vector<float> a = rng.values(12), b = rng.values(12), y(12), want(12);
  for (size_t i = 0; i < 12; ++i) want[i] = a[i] + b[i];
  ASSERT_TRUE(ctx->setTensorAddress("a", a.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("b", b.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  ASSERT_TRUE(ctx->enqueue(nullptr).isOk());
  expectNear(y, want, 1e-6f, rng.seed);
}

TEST(OnnxProfiles, EveryProfileIsACorner) {
  // A second profile adds its corners: the network must be right at batch 16 too.
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      convModel(), net,
      profiles(
          {profile(
               {{"x", {makeDims({1, 3, 8, 8}), makeDims({4, 3, 8, 8}), makeDims({8, 3, 8, 8})}}}),
           profile(
               {{"x",
                 {makeDims({9, 3, 8, 8}), makeDims({16, 3, 8, 8}), makeDims({16, 3, 8, 8})}}})}));
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(net->getOutput(0)->getDimensions(), makeDims({4, 10}));
}

// Refusals.

// x [N, 4] and ConstantOfShape(Shape(x)) of ones, read by `consumer` (x and the ones) into y.
Model onesModel(const std::string& consumer) {
  Model m(13);
  m.input("x", {1, 4});
  symbolic(m, 0, 0, "N");
  m.node("Shape", {"x"}, {"shape"});
  auto& cos = m.node("ConstantOfShape", {"shape"}, {"ones"}, "ones");
  auto& value = attr(cos, "value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value.mutable_t()->add_dims(1);
  value.mutable_t()->add_float_data(1.f);
  auto& node = m.node(consumer, {"x", "ones"}, {"y"}, "consumer");
  if (consumer == "Concat") attrInt(node, "axis", 0);
  m.output("y");
  return m;
}

TEST(OnnxProfiles, AOneValuedConstantOfShapeIntoABroadcastIsGeneric) {
  // x + ones([N, 4]): the ones become a [1, 1] constant, which the Add broadcasts.
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 4}), makeDims({2, 4}), makeDims({6, 4})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(onesModel("Add"), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  Rng rng;
  for (int64_t n : {5, 1}) {
    const Dims shape = makeDims({n, 4});
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, shape);
    std::vector<float> want;
    for (float v : x) want.push_back(v + 1.f);
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

TEST(OnnxProfiles, AConstantOfShapeThatANonBroadcastingNodeReadsFollowsTheBatch) {
  // concat(x, ones([N, 4])) on axis 0: the ones' dims are the output's, so they are an Expand of
  // a [1, 1] constant whose dim 0 is the input's at run time (ExpandParams::shapeDimsOf).
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 4}), makeDims({2, 4}), makeDims({3, 4})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(onesModel("Concat"), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ILayer* ones = layerNamed(*net, "ones");
  ASSERT_NE(ones, nullptr);
  EXPECT_EQ(ones->getType(), LayerType::kEXPAND);
  ASSERT_EQ(ones->getNbInputs(), 2);  // the value at dims of 1, and the dims source
  EXPECT_STREQ(ones->getInput(1)->getName(), "x");
  Rng rng;
  for (int64_t n : {3, 1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    const Dims shape = makeDims({n, 4});
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, makeDims({2 * n, 4}));
    std::vector<float> want = x;
    want.resize(size_t(2 * n * 4), 1.f);
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

// x [N] + Range(0, limit(N), 1) in float, where limit computes from N as `limit` says; without
// `addX`, y is the range alone (through a Relu).
Model rangeModel(const std::function<void(Model&)>& limit, bool addX = true) {
  Model m(13);
  m.input("x", {1});
  symbolic(m, 0, 0, "N");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0}, true);
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  limit(m);
  attrInt(m.node("Cast", {"length"}, {"limit"}), "to", onnx::TensorProto::FLOAT);
  initFloatScalar(m, "start", 0.f);
  initFloatScalar(m, "delta", 1.f);
  m.node("Range", {"start", "limit", "delta"}, {"positions"}, "positions");
  if (addX)
    m.node("Add", {"x", "positions"}, {"y"}, "add");
  else
    m.node("Relu", {"positions"}, {"y"}, "relu");
  m.output("y");
  return m;
}

TEST(OnnxProfiles, ARangeOfTheBatchIsARangeLayerOfTheInputsDim) {
  // Position ids, torch.arange(x.shape[0]): the Range layer, its length x's dim 0 at run time.
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1}), makeDims({2}), makeDims({8})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(rangeModel([](Model& m) { m.node("Identity", {"n"}, {"length"}); }), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ILayer* positions = layerNamed(*net, "positions");
  ASSERT_NE(positions, nullptr);
  EXPECT_EQ(positions->getType(), LayerType::kRANGE);
  ASSERT_EQ(positions->getNbInputs(), 1);
  EXPECT_STREQ(positions->getInput(0)->getName(), "x");
  Rng rng;
  for (int64_t n : {5, 1, 8}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    const std::vector<float> x = rng.values(n);
    Tensor y;
    s = buildAndRun(*net, p, makeDims({n}), x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, makeDims({n}));
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) want.push_back(x[size_t(i)] + float(i));
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

TEST(OnnxProfiles, ARangeWhoseLengthIsNoInputsDimIsRefused) {
  // Range(0, 2N) is read as data, and 2N is no dim kiln can take from an input.
  Model m = rangeModel(
      [](Model& m) {
        m.initInts("two", {2}, true);
        m.node("Mul", {"n", "two"}, {"length"});
      },
      false);
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(m, net, profiles({profile({{"x", {makeDims({1}), makeDims({2}), makeDims({3})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"'positions' (Range)", "its length dim 0 depends on the input shapes",
                 "2 at profile 0's min", "6 at profile 0's max", "is no dynamic input's dim",
                 "kiln cannot yet carry shape arithmetic to run time"});
}

TEST(OnnxProfiles, AShapeReadAsDataIsAShapeLayer) {
  // x [N] + float(N) * 0.5, N also a Range's limit (a shape operand): the Shape layer gives the
  // data, and the folded value stays for the Range (positions, from the same Shape).
  Model m(13);
  m.input("x", {1});
  symbolic(m, 0, 0, "N");
  m.node("Shape", {"x"}, {"shape"}, "size");
  attrInt(m.node("Cast", {"shape"}, {"n"}), "to", onnx::TensorProto::FLOAT);
  initFloatScalar(m, "half", 0.5f);
  m.node("Mul", {"n", "half"}, {"h"});
  m.node("Add", {"x", "h"}, {"xh"});
  m.initInts("zero", {0}, true);
  attrInt(m.node("Gather", {"n", "zero"}, {"limit"}), "axis", 0);
  initFloatScalar(m, "start", 0.f);
  initFloatScalar(m, "delta", 1.f);
  m.node("Range", {"start", "limit", "delta"}, {"positions"}, "positions");
  m.node("Add", {"xh", "positions"}, {"y"});
  m.output("y");
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1}), makeDims({2}), makeDims({6})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ILayer* size = layerNamed(*net, "size");
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->getType(), LayerType::kSHAPE);
  Rng rng;
  for (int64_t n : {5, 1, 6}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    const std::vector<float> x = rng.values(n);
    Tensor y;
    s = buildAndRun(*net, p, makeDims({n}), x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> want;
    for (int64_t i = 0; i < n; ++i) want.push_back(x[size_t(i)] + 0.5f * float(n) + float(i));
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

TEST(OnnxProfiles, ARangeWhoseStartFollowsTheInputIsRefused) {
  // Range(N, 2N): its length is N, but its start follows the input too.
  Model m = rangeModel(
      [](Model& m) {
        m.initInts("two", {2}, true);
        m.node("Mul", {"n", "two"}, {"length"});
      },
      false);
  for (auto& node : *m.graph().mutable_node())
    if (node.op_type() == "Range") node.set_input(0, "n_float");
  auto* cast = m.graph().add_node();
  cast->set_op_type("Cast");
  cast->add_input("n");
  cast->add_output("n_float");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  // The Cast must come before the Range: move it next to the Gather.
  auto* nodes = m.graph().mutable_node();
  for (int i = nodes->size() - 1; i > 3; --i) nodes->SwapElements(i, i - 1);
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(m, net, profiles({profile({{"x", {makeDims({1}), makeDims({2}), makeDims({3})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"'positions' (Range)", "start and delta depend on the input shapes",
                 "kiln cannot yet carry shape arithmetic to run time"});
}

TEST(OnnxProfiles, ASliceOfABufferToTheSequenceTakesItsLengthFromTheInput) {
  // x [N, S] + table[:S] (BERT's position ids, GPT-2's causal mask): a slice of a constant whose
  // output dim is the input's dim 1 at run time (SliceParams::outputDimsOf).
  Model m(13);
  m.input("x", {1, 1});
  symbolic(m, 0, 0, "N");
  symbolic(m, 0, 1, "S");
  std::vector<float> table(10);
  for (size_t k = 0; k < table.size(); ++k) table[k] = 0.5f * float(k) - 1.f;
  m.initFloat("table", {10}, table);
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("one", {1}, true);
  attrInt(m.node("Gather", {"shape", "one"}, {"s"}), "axis", 0);
  m.initInts("axes", {0});
  m.node("Unsqueeze", {"s", "axes"}, {"end"});
  m.initInts("begin", {0});
  m.node("Slice", {"table", "begin", "end", "axes"}, {"rows"}, "rows");
  m.node("Add", {"x", "rows"}, {"y"}, "add");
  m.output("y");
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 1}), makeDims({2, 4}), makeDims({3, 10})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ILayer* rows = nullptr;  // the layer making tensor 'rows'
  for (int32_t i = 0; i < net->getNbLayers(); ++i)
    if (std::string(net->getLayer(i)->getOutput(0)->getName()) == "rows") rows = net->getLayer(i);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->getType(), LayerType::kSLICE);
  ASSERT_EQ(rows->getNbInputs(), 2);
  EXPECT_STREQ(rows->getInput(1)->getName(), "x");
  Rng rng;
  for (const Dims& shape : {makeDims({3, 7}), makeDims({1, 1}), makeDims({2, 10})}) {
    SCOPED_TRACE(dimsString(shape));
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, shape);
    std::vector<float> want;
    for (int64_t i = 0; i < shape.d[0]; ++i)
      for (int64_t j = 0; j < shape.d[1]; ++j)
        want.push_back(x[size_t(i * shape.d[1] + j)] + table[size_t(j)]);
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

// Resize by scales (F.interpolate(scale_factor=2) as PyTorch exports it) follows a dynamic batch:
// its output dims are floor(input * scale), computed by the layer at every shape.
TEST(OnnxProfiles, AResizeByScalesFollowsTheBatch) {
  Model m(13);
  m.input("x", {1, 2, 3, 3});
  symbolic(m, 0, 0, "N");
  m.initFloat("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  m.graph().add_initializer()->set_name("roi");  // empty: no region of interest
  m.graph().mutable_initializer(1)->set_data_type(onnx::TensorProto::FLOAT);
  m.graph().mutable_initializer(1)->add_dims(0);
  attrString(m.node("Resize", {"x", "roi", "scales"}, {"y"}, "up"), "mode", "nearest");
  m.output("y");
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 2, 3, 3}), makeDims({2, 2, 3, 3}), makeDims({4, 2, 3, 3})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  Rng rng;
  for (int64_t n : {3, 1, 4}) {
    const Dims shape = makeDims({n, 2, 3, 3});
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(y.dims, makeDims({n, 2, 6, 6}));
    for (int64_t c = 0; c < n * 2; ++c)  // nearest, half-pixel, x2: each value in a 2x2 block
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 6; ++j)
          ASSERT_EQ(y.v[size_t((c * 6 + i) * 6 + j)], x[size_t((c * 3 + i / 2) * 3 + j / 2)]);
  }
}

// x [N, S] reshaped to [S, N] through Shape -> Gather -> Concat: two target dims change between
// the corners, neither a copy of the reshape input's dim at its index.
Model swapModel() {
  Model m(13);
  m.input("x", {1, 1});
  symbolic(m, 0, 0, "N");
  symbolic(m, 0, 1, "S");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0});
  m.initInts("one", {1});
  attrInt(m.node("Gather", {"shape", "one"}, {"s"}), "axis", 0);
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  attrInt(m.node("Concat", {"s", "n"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"r"}, "swap");
  m.node("Relu", {"r"}, {"y"});
  m.output("y");
  return m;
}

TEST(OnnxProfiles, AReshapeWithTwoDynamicDimsTakesThemFromTheInput) {
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({1, 3}), makeDims({2, 5}), makeDims({4, 7})}}})};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(swapModel(), net, profiles(p));
  ASSERT_TRUE(s.isOk()) << s.toString();
  ILayer* swap = layerNamed(*net, "swap");
  ASSERT_NE(swap, nullptr);
  ASSERT_EQ(swap->getNbInputs(), 2);  // the dims source: the graph input
  EXPECT_STREQ(swap->getInput(1)->getName(), "x");
  ASSERT_TRUE(net->setWorkingShape("x", makeDims({3, 6})).isOk());
  EXPECT_EQ(swap->getOutput(0)->getDimensions(), makeDims({6, 3}));
  Rng rng;
  for (const Dims& shape : {makeDims({3, 6}), makeDims({4, 7}), makeDims({1, 3})}) {
    SCOPED_TRACE(dimsString(shape));
    const std::vector<float> x = rng.values(volume(shape));
    Tensor y;
    s = buildAndRun(*net, p, shape, x, y);
    if (pendingKernel(s)) GTEST_SKIP() << s.toString();
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(y.dims, makeDims({shape.d[1], shape.d[0]}));
    std::vector<float> want;
    for (float v : x) want.push_back(std::max(v, 0.f));
    expectNear(y.v, want, 0.f, rng.seed);
  }
}

TEST(OnnxProfiles, AReshapeWithTwoComputedDynamicDimsIsRefused) {
  // x [N, S, 4] reshaped to [2N, 2S]: two target dims change, and neither is an input's dim.
  Model m(13);
  m.input("x", {1, 1, 4});
  symbolic(m, 0, 0, "N");
  symbolic(m, 0, 1, "S");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0});
  m.initInts("one", {1});
  m.initInts("two", {2}, true);
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  attrInt(m.node("Gather", {"shape", "one"}, {"s"}), "axis", 0);
  m.node("Mul", {"n", "two"}, {"n2"});
  m.node("Mul", {"s", "two"}, {"s2"});
  attrInt(m.node("Concat", {"n2", "s2"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"}, "grow");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net,
                   profiles({profile(
                       {{"x", {makeDims({1, 3, 4}), makeDims({2, 5, 4}), makeDims({4, 7, 4})}}})}));
  expectMessage(
      s, StatusCode::kUnsupported,
      {"'grow' (Reshape)", "depends on the input shapes in more than one dim", "dims 0 and 1",
       "[2,6] at profile 0's min", "[4,10] at profile 0's opt", "[8,14] at profile 0's max",
       "kiln cannot yet carry shape arithmetic to run time"});
}

TEST(OnnxProfiles, AReshapeDimThatTwoInputDimsCouldGiveIsRefused) {
  // x [N, S] -> [S, N] where the profile keeps N and S equal at every corner: which is which?
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(swapModel(), net,
            profiles({profile({{"x", {makeDims({1, 1}), makeDims({2, 2}), makeDims({4, 4})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"'swap' (Reshape)", "they are equal at every corner", "Give profiles where"});
}

// x [N, 6] -> Slice (axes, starts, ends as given) -> Relu -> y.
Model sliceModel(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                 std::vector<int64_t> steps) {
  Model m(13);
  m.input("x", {1, 6});
  symbolic(m, 0, 0, "N");
  m.initInts("starts", starts);
  m.initInts("ends", ends);
  m.initInts("axes", axes);
  m.initInts("steps", steps);
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"}, "slice");
  m.node("Relu", {"s"}, {"y"});
  m.output("y");
  return m;
}

// A slice of the [N, 6] input x, followed by a Relu: at batch n it reads rows(n) (in order) and,
// of each, the columns `cols`.
struct SliceCase {
  Model model;
  std::function<std::vector<int64_t>(int64_t)> rows;
  std::vector<int64_t> cols;
};

std::vector<int64_t> rowsFrom(int64_t first, int64_t end, int64_t step) {
  std::vector<int64_t> r;
  for (int64_t i = first; step > 0 ? i < end : i > end; i += step) r.push_back(i);
  return r;
}

// Each case parsed with profiles p, one plan built, run at each batch (an empty result skipped:
// it has no buffer to read) and compared with relu(x[row, col]).
void expectSlices(const std::vector<SliceCase>& cases, const std::vector<OptimizationProfile>& p,
                  std::initializer_list<int64_t> batches) {
  Rng rng;
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE("case " + std::to_string(c));
    std::unique_ptr<INetworkDefinition> net;
    Status s = parse(cases[c].model, net, profiles(p));
    ASSERT_TRUE(s.isOk()) << s.toString();
    for (int64_t n : batches) {
      SCOPED_TRACE("batch " + std::to_string(n));
      const std::vector<int64_t> rows = cases[c].rows(n);
      const std::vector<int64_t>& cols = cases[c].cols;
      if (rows.empty()) continue;
      const Dims shape = makeDims({n, 6});
      const std::vector<float> x = rng.values(volume(shape));
      Tensor y;
      s = buildAndRun(*net, p, shape, x, y);
      if (pendingKernel(s)) GTEST_SKIP() << s.toString();
      ASSERT_TRUE(s.isOk()) << s.toString();
      ASSERT_EQ(y.dims, makeDims({int64_t(rows.size()), int64_t(cols.size())}));
      std::vector<float> expected;
      for (int64_t i : rows)
        for (int64_t j : cols) expected.push_back(std::max(x[size_t(i * 6 + j)], 0.f));
      expectNear(y.v, expected, 0.f, rng.seed);
    }
  }
}

const std::vector<int64_t> kAllColumns = {0, 1, 2, 3, 4, 5};

TEST(OnnxProfiles, SlicesToTheEndOfADynamicAxisAreGeneric) {
  // x[:, :2] keeps the whole batch axis; x[1::2, 1:] reads to the end of both.
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  expectSlices(
      {{sliceModel({0}, {2}, {1}, {1}), [](int64_t n) { return rowsFrom(0, n, 1); }, {0, 1}},
       {sliceModel({1, 1}, {kMax, kMax}, {0, 1}, {2, 1}),
        [](int64_t n) { return rowsFrom(1, n, 2); },
        {1, 2, 3, 4, 5}}},
      {profile({{"x", {makeDims({1, 6}), makeDims({4, 6}), makeDims({9, 6})}}})}, {3, 9, 2});
}

TEST(OnnxProfiles, ASliceStoppingBeforeTheEndOfADynamicAxisIsGeneric) {
  // x[:-1] and x[1:-2:2] on the batch axis: to the end less 1 and 2 (SliceParams::beforeEnd).
  // (At 2 and 3 the second is empty.)
  expectSlices({{sliceModel({0}, {-1}, {0}, {1}), [](int64_t n) { return rowsFrom(0, n - 1, 1); },
                 kAllColumns},
                {sliceModel({1}, {-2}, {0}, {2}), [](int64_t n) { return rowsFrom(1, n - 2, 2); },
                 kAllColumns}},
               {profile({{"x", {makeDims({2, 6}), makeDims({4, 6}), makeDims({9, 6})}}})},
               {4, 9, 5, 7});
}

TEST(OnnxProfiles, SlicesCountedFromTheEndOfADynamicAxisAreGeneric) {
  // x[-2:], x[-3:-1] and x[::-1] on the batch axis: starts N - 2, N - 3 and N - 1
  // (SliceParams::startFromEnd), clamped at 0 as ONNX does when N is smaller (min 1).
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  expectSlices(
      {{sliceModel({-2}, {kMax}, {0}, {1}),
        [](int64_t n) { return rowsFrom(std::max<int64_t>(0, n - 2), n, 1); }, kAllColumns},
       {sliceModel({-3}, {-1}, {0}, {1}),
        [](int64_t n) { return rowsFrom(std::max<int64_t>(0, n - 3), n - 1, 1); }, kAllColumns},
       {sliceModel({-1}, {kMin}, {0}, {-1}), [](int64_t n) { return rowsFrom(n - 1, -1, -1); },
        kAllColumns}},
      {profile({{"x", {makeDims({1, 6}), makeDims({4, 6}), makeDims({9, 6})}}})}, {3, 9, 1, 2, 6});
}

TEST(OnnxProfiles, ASliceWithAComputedEndOrAVaryingStartIsRefused) {
  const std::vector<OptimizationProfile> p = {
      profile({{"x", {makeDims({2, 6}), makeDims({4, 6}), makeDims({6, 6})}}})};
  // x[:, :N-1]: axis 1 is fixed, and N - 1 is no input's dim.
  Model m(13);
  m.input("x", {1, 6});
  symbolic(m, 0, 0, "N");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0});
  m.initInts("one", {1});
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  m.node("Sub", {"n", "one"}, {"end"});
  m.node("Slice", {"x", "zero", "end", "one"}, {"s"}, "slice");
  m.node("Relu", {"s"}, {"y"});
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net, profiles(p));
  expectMessage(s, StatusCode::kUnsupported,
                {"'slice' (Slice)", "slice output dim 1 depends on the input shapes",
                 "does not read to the end", "is no dynamic input's dim",
                 "[2,1] at profile 0's min", "[6,5] at profile 0's max"});
  // x[N/2:]: its start moves with N, but not at a fixed distance from the end.
  Model half(13);
  half.input("x", {1, 6});
  symbolic(half, 0, 0, "N");
  half.node("Shape", {"x"}, {"shape"});
  half.initInts("zero", {0});
  half.initInts("two", {2});
  half.initInts("end", {std::numeric_limits<int64_t>::max()});
  attrInt(half.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  half.node("Div", {"n", "two"}, {"start"});
  half.node("Slice", {"x", "start", "end", "zero"}, {"s"}, "slice");
  half.node("Relu", {"s"}, {"y"});
  half.output("y");
  s = parse(half, net, profiles(p));
  expectMessage(s, StatusCode::kUnsupported,
                {"node 3 'slice' (Slice)", "slice start on axis 0 depends on the input shapes",
                 "[1,0] at profile 0's min", "[3,0] at profile 0's max",
                 "not a fixed distance from the end"});
}

TEST(OnnxProfiles, AProfileMissingAnInputIsRefused) {
  std::unique_ptr<INetworkDefinition> net;
  OptimizationProfile p = profile({{"a", {makeDims({1, 4}), makeDims({4, 4}), makeDims({8, 4})}}});
  Status s = parse(sharedBatchModel(), net, profiles({sharedBatchProfile(), p}));
  expectMessage(s, StatusCode::kInvalidArgument,
                {"profile 1 gives no min shape for graph input 'b'", "min, opt and max"});
}

TEST(OnnxProfiles, AProfileChangingAFixedDimIsRefused) {
  std::unique_ptr<INetworkDefinition> net;
  OptimizationProfile p = sharedBatchProfile();
  p.setDimensions("b", OptProfileSelector::kMAX, makeDims({8, 5}));
  Status s = parse(sharedBatchModel(), net, profiles({p}));
  expectMessage(
      s, StatusCode::kInvalidArgument,
      {"profile 0's max shape for graph input 'b' axis 1 is 5", "the model fixes that axis at 4"});
}

TEST(OnnxProfiles, OtherWrongProfilesAreRefused) {
  struct Case {
    std::function<void(OptimizationProfile&)> change;
    std::string message;
  };
  const Case cases[] = {
      {[](OptimizationProfile& p) {
         p.setDimensions("c", OptProfileSelector::kOPT, makeDims({1}));
       },
       "profile 0 gives shapes for 'c', which is not a graph input of the model (its inputs: "
       "'a', 'b')"},
      {[](OptimizationProfile& p) {
         p.setDimensions("a", OptProfileSelector::kOPT, makeDims({4, 4, 1}));
       },
       "profile 0's opt shape for graph input 'a', 4x4x1, has rank 3 but the model's has rank 2"},
      {[](OptimizationProfile& p) {
         p.setDimensions("a", OptProfileSelector::kMIN, makeDims({6, 4}));
       },
       "profile 0, graph input 'a' axis 0: min 6, opt 4 and max 8 must have min <= opt <= max"},
  };
  for (const Case& c : cases) {
    OptimizationProfile p = sharedBatchProfile();
    c.change(p);
    std::unique_ptr<INetworkDefinition> net;
    Status s = parse(sharedBatchModel(), net, profiles({p}));
    expectMessage(s, StatusCode::kInvalidArgument, {c.message.c_str()});
  }
}

TEST(OnnxProfiles, InputShapesAndProfilesTogetherAreRefused) {
  OnnxParserOptions o = profiles({sharedBatchProfile()});
  o.inputShapes = {{"a", makeDims({2, 4})}, {"b", makeDims({2, 4})}};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(sharedBatchModel(), net, o);
  expectMessage(s, StatusCode::kInvalidArgument, {"both inputShapes and profiles"});
}

TEST(OnnxProfiles, ProfilesForAStaticModelAreRefused) {
  Model m(13);
  m.input("x", {2, 4});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      m, net, profiles({profile({{"x", {makeDims({2, 4}), makeDims({2, 4}), makeDims({2, 4})}}})}));
  expectMessage(
      s, StatusCode::kInvalidArgument,
      {"no graph input of the model has a symbolic or unknown dim", "the model is static"});
}

TEST(OnnxProfiles, WithoutShapesOrProfilesTheErrorNamesBoth) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(sharedBatchModel(), net);
  expectMessage(s, StatusCode::kUnsupported,
                {"OnnxParserOptions::inputShapes", "OnnxParserOptions::profiles",
                 "kiln build --shapes NAME:MIN,OPT,MAX"});
}

}  // namespace
}  // namespace kiln::testing
