// Shape-value inputs (OnnxParserOptions::shapeValues, ITensor::setShapeValues): an integer graph
// input that a node reads as a shape operand is built for the values given, stays an input of the
// engine, and is checked at every enqueue; a plan keeps the values across serialization.
#include <gtest/gtest.h>

#include <cstring>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// x [2, 3, 4] float -> Reshape(x, shape [2] int64) -> y; `shape` is a graph input.
Model reshapeModel() {
  Model m(13);
  m.input("x", {2, 3, 4});
  m.input("shape", {2}, onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  m.output("y");
  return m;
}

OnnxParserOptions withValues(std::map<std::string, std::vector<int64_t>> values) {
  OnnxParserOptions o;
  o.shapeValues = std::move(values);
  return o;
}

Status buildEngine(const Model& m, const OnnxParserOptions& options,
                   std::unique_ptr<IEngine>& engine) {
  std::unique_ptr<INetworkDefinition> net;
  KILN_RETURN_IF_ERROR(parse(m, net, options));
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  std::vector<uint8_t> plan;
  KILN_RETURN_IF_ERROR(createBuilder()->buildSerializedNetwork(*net, config, plan));
  return createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
}

// Runs the reshape engine with `shape` holding `values`; `y` gets the output.
Status runReshape(IEngine& engine, const std::vector<int64_t>& values, std::vector<float>& x,
                  std::vector<float>& y) {
  std::unique_ptr<IExecutionContext> ctx;
  KILN_RETURN_IF_ERROR(engine.createExecutionContext(ctx));
  std::vector<int64_t> shape = values;
  y.assign(x.size(), -1.f);
  KILN_RETURN_IF_ERROR(ctx->setTensorAddress("x", x.data()));
  KILN_RETURN_IF_ERROR(ctx->setTensorAddress("shape", shape.data()));
  KILN_RETURN_IF_ERROR(ctx->setTensorAddress("y", y.data()));
  return ctx->enqueue(nullptr);
}

TEST(OnnxShapeValues, AReshapeShapeInputIsBuiltForItsValuesAndStaysAnEngineInput) {
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(reshapeModel(), withValues({{"shape", {4, -1}}}), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(engine->getNbIOTensors(), 3);
  EXPECT_EQ(engine->getTensorIOMode("shape"), TensorIOMode::kINPUT);
  EXPECT_TRUE(engine->isShapeValueInput("shape"));
  EXPECT_FALSE(engine->isShapeValueInput("x"));
  EXPECT_EQ(engine->getShapeValues("shape"), (std::vector<int64_t>{4, -1}));
  EXPECT_EQ(engine->getTensorDesc("y").dims, makeDims({4, 6}));
  EXPECT_NE(engine->inspect().find(
                "\"shape_value_inputs\": [{\"name\": \"shape\", \"values\": [4, -1]}]"),
            std::string::npos)
      << engine->inspect();
  Rng rng;
  std::vector<float> x = rng.values(24), y;
  s = runReshape(*engine, {4, -1}, x, y);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(y, x);  // a reshape moves no element
}

TEST(OnnxShapeValues, OtherValuesAtRunTimeFailTheEnqueueNamingInputIndexAndValues) {
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(reshapeModel(), withValues({{"shape", {4, -1}}}), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> x(24, 1.f), y;
  s = runReshape(*engine, {4, 6}, x, y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"'shape'", "shape-value input", "holds 6 at index 1", "[4,-1]"})
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.toString();
  EXPECT_EQ(y, std::vector<float>(24, -1.f)) << "no step may run";
}

TEST(OnnxShapeValues, WithoutValuesTheParserSaysHowToGiveThem) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(reshapeModel(), net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("must be a constant known at parse time"), std::string::npos);
  EXPECT_NE(s.message().find("OnnxParserOptions::shapeValues"), std::string::npos) << s.toString();
}

TEST(OnnxShapeValues, ValuesThatDoNotFitTheInputAreRefused) {
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(reshapeModel(), net, withValues({{"shape", {24}}}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("1 values are given for it, but its shape 2 holds 2"),
            std::string::npos)
      << s.toString();
  s = parse(reshapeModel(), net, withValues({{"nope", {1}}}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'nope', which is not a graph input"), std::string::npos)
      << s.toString();
}

TEST(OnnxShapeValues, ValuesForAnInputReadAsDataAreIgnored) {
  // y = x + Cast(b) with b an int64 data input: no node reads it as a shape operand, so the values
  // given for it are ignored and it is read at run time like any input.
  Model m(13);
  m.input("x", {3});
  m.input("b", {3}, onnx::TensorProto::INT64);
  attrInt(m.node("Cast", {"b"}, {"c"}), "to", onnx::TensorProto::FLOAT);
  m.node("Add", {"x", "c"}, {"y"});
  m.output("y");
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(m, withValues({{"b", {4, 5, 6}}}), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_FALSE(engine->isShapeValueInput("b"));
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<float> x = {0.5f, 1.5f, 2.5f}, y(3, 0.f);
  std::vector<int64_t> b = {7, -8, 9};
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("b", b.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  s = ctx->enqueue(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(y, (std::vector<float>{7.5f, -6.5f, 11.5f}));
}

TEST(OnnxShapeValues, AnInputReadAsShapeAndAsDataGivesTheDataItsValues) {
  // Expand(x, shape) + Cast(shape) read as data: the data path sees the values built for.
  Model m(13);
  m.input("x", {1, 2});
  m.input("shape", {2}, onnx::TensorProto::INT64);
  m.node("Expand", {"x", "shape"}, {"e"});
  attrInt(m.node("Cast", {"shape"}, {"c"}), "to", onnx::TensorProto::FLOAT);
  m.node("Add", {"e", "c"}, {"y"});
  m.output("y");
  std::unique_ptr<IEngine> engine;
  Status s = buildEngine(m, withValues({{"shape", {3, 2}}}), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  std::vector<float> x = {0.5f, -1.5f}, y(6, 0.f);
  std::vector<int64_t> shape = {3, 2};
  ASSERT_TRUE(ctx->setTensorAddress("x", x.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("shape", shape.data()).isOk());
  ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
  s = ctx->enqueue(nullptr);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(y, (std::vector<float>{3.5f, 0.5f, 3.5f, 0.5f, 3.5f, 0.5f}));
}

TEST(OnnxShapeValues, TheNetworkRefusesValuesThatDoNotFitTheInput) {
  std::unique_ptr<INetworkDefinition> net = createNetwork();
  ITensor* f = net->addInput("f", DataType::kFLOAT, makeDims({2}));
  ITensor* i32 = net->addInput("i", DataType::kINT32, makeDims({2}));
  ITensor* dyn = net->addInput("d", DataType::kINT64, makeDims({-1}));
  ASSERT_TRUE(f && i32 && dyn);
  const int64_t two[] = {1, 2}, big[] = {1, int64_t(1) << 40};
  EXPECT_FALSE(f->setShapeValues(two, 2)) << "float input";
  EXPECT_FALSE(dyn->setShapeValues(two, 2)) << "dynamic dims";
  EXPECT_FALSE(i32->setShapeValues(two, 1)) << "wrong count";
  EXPECT_FALSE(i32->setShapeValues(big, 2)) << "beyond int32";
  EXPECT_TRUE(i32->getShapeValues().empty());
  EXPECT_TRUE(i32->setShapeValues(two, 2));
  EXPECT_EQ(i32->getShapeValues(), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace kiln::testing
