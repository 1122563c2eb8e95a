// Shape arithmetic on constants is folded at parse time; shape-only ops; tensor files.
#include <cstdio>
#include <fstream>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

int nonConstantLayers(INetworkDefinition& net) {
  int n = 0;
  for (int32_t i = 0; i < net.getNbLayers(); ++i)
    n += net.getLayer(i)->getType() != LayerType::kCONSTANT;
  return n;
}

TEST(OnnxShape, PyTorchFlattenChainFoldsToOneReshape) {
  // x.view(x.size(0), -1) as exported: Shape -> Gather(0) -> Unsqueeze -> Concat([.., -1]) ->
  // Reshape.
  Rng rng;
  Model m(13);
  m.input("x", {2, 3, 4, 5});
  m.node("Shape", {"x"}, {"s"});
  m.initInts("zero", {0}, true);
  auto& g = m.node("Gather", {"s", "zero"}, {"n"});
  attrInt(g, "axis", 0);
  m.initInts("axes0", {0});
  m.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  m.initInts("minus1", {-1});
  auto& c = m.node("Concat", {"n1", "minus1"}, {"shape"});
  attrInt(c, "axis", 0);
  auto& cast = m.node("Cast", {"shape"}, {"shape64"});
  attrInt(cast, "to", onnx::TensorProto::INT64);
  m.node("Reshape", {"x", "shape64"}, {"y"});
  m.output("y");

  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(nonConstantLayers(*net), 1) << "the shape arithmetic was not folded";
  auto x = rng.values(120);
  std::map<std::string, Tensor> out;
  s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(out["y"].dims, makeDims({2, 60}));
  expectNear(out["y"].v, x, 0.f, rng.seed);
}

TEST(OnnxShape, ConstantsFoldThroughArithmeticSliceAndConstantOfShape) {
  // shape(x)[2:] * 2 -> ConstantOfShape(value 1.5) added to a broadcast input.
  Rng rng;
  Model m(13);
  m.input("x", {1, 2, 3, 2});
  m.input("z", {6, 4});
  m.node("Shape", {"x"}, {"s"});
  m.initInts("st", {2});
  m.initInts("en", {100});
  m.node("Slice", {"s", "st", "en"}, {"hw"});
  m.initInts("two", {2}, true);
  m.node("Mul", {"hw", "two"}, {"hw2"});
  auto& cos = m.node("ConstantOfShape", {"hw2"}, {"ones"});
  auto& a = attr(cos, "value");
  a.set_type(onnx::AttributeProto::TENSOR);
  a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a.mutable_t()->add_dims(1);
  a.mutable_t()->add_float_data(1.5f);
  auto& k = m.node("Constant", {}, {"k"});
  attr(k, "value_float").set_f(0.25f);
  k.mutable_attribute(0)->set_type(onnx::AttributeProto::FLOAT);
  m.node("Sub", {"ones", "k"}, {"c"});  // folded: 1.25 everywhere, [6, 4]
  m.node("Add", {"z", "c"}, {"y"});
  m.node("Identity", {"y"}, {"y2"});
  m.output("y2");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(nonConstantLayers(*net), 2);  // the Add, and the copy naming the output
  auto z = rng.values(24);
  std::map<std::string, Tensor> out;
  s = run(m, {{"x", rng.values(12)}, {"z", z}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ref;
  for (float v : z) ref.push_back(v + 1.25f);
  expectNear(out["y2"].v, ref, 1e-6f, rng.seed);
}

TEST(OnnxShape, SqueezeUnsqueezeFlattenDropout) {
  Rng rng;
  for (int64_t opset : {11, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Model m(opset);
    m.input("x", {2, 1, 3, 1});
    if (opset >= 13) {
      m.initInts("sq", {1, -1});
      m.node("Squeeze", {"x", "sq"}, {"a"});
      m.initInts("us", {0});
      m.node("Unsqueeze", {"a", "us"}, {"b"});
    } else {
      attrInts(m.node("Squeeze", {"x"}, {"a"}), "axes", {1, -1});
      attrInts(m.node("Unsqueeze", {"a"}, {"b"}), "axes", {0});
    }
    m.node("Dropout", {"b"}, {"c"});
    attrInt(m.node("Flatten", {"c"}, {"y"}), "axis", 2);
    m.output("b");
    m.output("y");
    auto x = rng.values(6);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(out["b"].dims, makeDims({1, 2, 3}));
    EXPECT_EQ(out["y"].dims, makeDims({2, 3}));
    expectNear(out["y"].v, x, 0.f, rng.seed);
  }
}

TEST(OnnxShape, TensorFileReadsRawAndTypedData) {
  Rng rng;
  auto v = rng.values(6);
  onnx::TensorProto raw;
  raw.set_name("in0");
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  raw.add_dims(3);
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), 24));
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::INT64);
  typed.add_dims(3);
  for (int64_t x : {int64_t(7), int64_t(-2), int64_t(1) << 40}) typed.add_int64_data(x);
  onnx::TensorProto external = raw;
  external.clear_raw_data();
  external.set_data_location(onnx::TensorProto::EXTERNAL);

  const std::string dir = ::testing::TempDir();
  auto write = [&](const onnx::TensorProto& t, const std::string& name) {
    std::ofstream(dir + name, std::ios::binary) << t.SerializeAsString();
    return dir + name;
  };
  OnnxTensor t;
  ASSERT_TRUE(readOnnxTensorFile(write(raw, "kiln_raw.pb"), t).isOk());
  EXPECT_EQ(t.name, "in0");
  EXPECT_EQ(t.type, DataType::kFLOAT);
  EXPECT_EQ(t.dims, makeDims({2, 3}));
  ASSERT_EQ(t.data.size(), 24u);
  EXPECT_EQ(std::memcmp(t.data.data(), v.data(), 24), 0) << "seed " << rng.seed;
  ASSERT_TRUE(readOnnxTensorFile(write(typed, "kiln_typed.pb"), t).isOk());
  EXPECT_EQ(t.type, DataType::kINT64);
  int64_t back[3];
  std::memcpy(back, t.data.data(), 24);
  EXPECT_EQ(back[2], 1LL << 40);
  Status s = readOnnxTensorFile(write(external, "kiln_ext.pb"), t);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("external"), std::string::npos) << s.message();
  EXPECT_FALSE(readOnnxTensorFile(dir + "kiln_missing.pb", t).isOk());
}

TEST(OnnxShape, SupportedOpsListsTheFamilies) {
  const auto& ops = onnxSupportedOps();
  for (const char* op : {"Conv", "Gemm", "Reshape", "Softmax", "MaxPool", "Concat", "Shape"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "CropAndResize"), ops.end());
}

// Layers whose kernels are written by other helpers: parsed here, run when they have landed.
TEST(OnnxShape, GatherSliceWhereRunOrArePending) {
  Rng rng;
  Model m(13);
  m.input("x", {3, 4});
  m.initInts("idx", {2, 0});
  attrInt(m.node("Gather", {"x", "idx"}, {"g"}), "axis", 1);  // [3, 2]
  m.initInts("st", {1});
  m.initInts("en", {3});
  m.node("Slice", {"x", "st", "en"}, {"sl"});  // rows 1..2: [2, 4]
  m.output("g");
  m.output("sl");
  auto x = rng.values(12);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  if (pendingKernel(s)) GTEST_SKIP() << "kernel pending: " << s.message();
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> g, sl(x.begin() + 4, x.begin() + 12);
  for (int r = 0; r < 3; ++r) g.push_back(x[size_t(r * 4 + 2)]), g.push_back(x[size_t(r * 4)]);
  expectNear(out["g"].v, g, 0.f, rng.seed);
  expectNear(out["sl"].v, sl, 0.f, rng.seed);
}

}  // namespace
}  // namespace kiln::testing
