// Models with symbolic input dims parsed with optimization profiles (OnnxParserOptions::profiles):
// the inputs stay dynamic, named after their dim_params; shape arithmetic is made shape-generic
// from the profiles' corners (a reshape dim that changes becomes 0 or -1), and what kiln cannot
// carry to run time is refused naming the node and its values at the corners.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>

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

TEST(OnnxProfiles, AConstantOfShapeThatDependsOnTheBatchIsRefused) {
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
  m.node("Add", {"x", "ones"}, {"y"}, "add");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      m, net, profiles({profile({{"x", {makeDims({1, 4}), makeDims({2, 4}), makeDims({3, 4})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"node 2 'add' (Add)", "node 1 'ones' (ConstantOfShape)",
                 "depends on the input shapes", "at profile 0's min", "at profile 0's max",
                 "kiln cannot yet carry shape arithmetic to run time"});
}

TEST(OnnxProfiles, ARangeThatDependsOnTheBatchIsRefused) {
  Model m(13);
  m.input("x", {1});
  symbolic(m, 0, 0, "N");
  m.node("Shape", {"x"}, {"shape"});
  m.initInts("zero", {0}, true);
  attrInt(m.node("Gather", {"shape", "zero"}, {"n"}), "axis", 0);
  attrInt(m.node("Cast", {"n"}, {"limit"}), "to", onnx::TensorProto::FLOAT);
  initFloatScalar(m, "start", 0.f);
  initFloatScalar(m, "delta", 1.f);
  m.node("Range", {"start", "limit", "delta"}, {"positions"}, "positions");
  m.node("Add", {"x", "positions"}, {"y"}, "add");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s =
      parse(m, net, profiles({profile({{"x", {makeDims({1}), makeDims({2}), makeDims({3})}}})}));
  expectMessage(
      s, StatusCode::kUnsupported,
      {"node 3 'positions' (Range)", "depends on the input shapes", "[0,1] at profile 0's opt"});
}

TEST(OnnxProfiles, AReshapeWithTwoDynamicDimsIsRefused) {
  // x [N, S] reshaped to [S, N]: two target dims change between the corners, neither a copy.
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
  m.node("Reshape", {"x", "target"}, {"y"}, "swap");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      m, net, profiles({profile({{"x", {makeDims({1, 3}), makeDims({2, 5}), makeDims({4, 7})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"node 4 'swap' (Reshape)", "depends on the input shapes in more than one dim",
                 "dims 0 and 1", "[3,1] at profile 0's min", "[5,2] at profile 0's opt",
                 "[7,4] at profile 0's max", "kiln cannot yet carry shape arithmetic to run time"});
}

TEST(OnnxProfiles, ASliceOfADynamicTensorIsRefused) {
  // kiln's slice layer has literal output dims: x[:, :2] bakes the batch in.
  Model m(13);
  m.input("x", {1, 4});
  symbolic(m, 0, 0, "N");
  m.initInts("starts", {0});
  m.initInts("ends", {2});
  m.initInts("axes", {1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "head");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(
      m, net, profiles({profile({{"x", {makeDims({1, 4}), makeDims({2, 4}), makeDims({3, 4})}}})}));
  expectMessage(s, StatusCode::kUnsupported,
                {"node 0 'head' (Slice)", "slice starts and output dims",
                 "[0,0,1,2] at profile 0's min", "[0,0,2,2] at profile 0's opt"});
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
