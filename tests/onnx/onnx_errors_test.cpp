// Malformed models are refused with errors that name the node and what is wrong; never a crash.
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

Status parseBytes(const std::string& b) {
  auto net = createNetwork();
  return parseOnnxBytes(b.data(), b.size(), "bad", *net);
}

Model convModel() {
  Model m(13);
  m.input("x", {1, 2, 4, 4});
  std::vector<float> w(3 * 2 * 9, 0.5f);
  m.initFloat("w", {3, 2, 3, 3}, w);
  m.node("Conv", {"x", "w"}, {"c"}, "conv0");
  m.node("Relu", {"c"}, {"y"}, "relu1");
  m.output("y");
  return m;
}

void expectError(const Status& s, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(s.isOk());
  for (const char* p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
}

TEST(OnnxErrors, TruncatedBytesAreRefused) {
  const std::string b = convModel().bytes();
  ASSERT_TRUE(parseBytes(b).isOk());
  Rng rng;
  for (size_t cut : {size_t(1), b.size() / 3, b.size() / 2, b.size() - 1}) {
    Status s = parseBytes(b.substr(0, cut));
    EXPECT_FALSE(s.isOk()) << "cut at " << cut;
  }
  // Mutated bytes: refused or parsed, never a crash (ASan checks the rest).
  for (int k = 0; k < 50; ++k) {
    std::string m = b;
    m[rng.gen() % m.size()] = char(rng.gen());
    (void)parseBytes(m);
  }
  EXPECT_FALSE(parseBytes("").isOk());
}

TEST(OnnxErrors, MissingInputNamesTheNode) {
  Model m = convModel();
  m.graph().mutable_node(1)->set_input(0, "nowhere");
  expectError(parseBytes(m.bytes()), {"node 1 'relu1' (Relu)", "nowhere"});
}

TEST(OnnxErrors, BadAttributeTypeNamesTheNode) {
  Model m = convModel();
  attrFloat(*m.graph().mutable_node(0), "group", 1.f);
  expectError(parseBytes(m.bytes()), {"node 0 'conv0' (Conv)", "'group'", "FLOAT"});
}

TEST(OnnxErrors, UnknownOpNamesTheNodeAndThePlugin) {
  Model m = convModel();
  m.graph().mutable_node(1)->set_op_type("FancyOp");
  expectError(parseBytes(m.bytes()), {"node 1 'relu1' (FancyOp)", "plugin not registered"});
}

TEST(OnnxErrors, OpsetAboveTwentyOneOrMissing) {
  for (int64_t opset : {0, 22}) {
    Model m = convModel();
    m.proto().mutable_opset_import(0)->set_version(opset);
    expectError(parseBytes(m.bytes()), {"opset", std::to_string(opset).c_str()});
  }
}

// Ops of opsets 18 to 21 that kiln does not have are refused by name, as any unknown op.
TEST(OnnxErrors, NewerOpsKilnLacksAreNamed) {
  for (const char* op : {"Col2Im", "CenterCropPad", "BitwiseAnd", "DFT", "AffineGrid"}) {
    Model m = convModel();
    m.proto().mutable_opset_import(0)->set_version(20);
    m.graph().mutable_node(1)->set_op_type(op);
    expectError(parseBytes(m.bytes()), {"node 1 'relu1'", op, "not built in"});
  }
}

TEST(OnnxErrors, SymbolicDimNamesTheInput) {
  Model m = convModel();
  auto* d = m.graph()
                .mutable_input(0)
                ->mutable_type()
                ->mutable_tensor_type()
                ->mutable_shape()
                ->mutable_dim(0);
  d->set_dim_param("batch");
  expectError(parseBytes(m.bytes()), {"'x'", "batch"});
}

TEST(OnnxErrors, ExternalInitializerAndShapeMismatch) {
  Model m = convModel();
  m.graph().mutable_initializer(0)->set_data_location(onnx::TensorProto::EXTERNAL);
  expectError(parseBytes(m.bytes()), {"'w'", "external"});

  Model r(13);
  r.input("x", {2, 3});
  r.initInts("shape", {4, 4});
  r.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  r.output("y");
  expectError(parseBytes(r.bytes()), {"node 0 'reshape' (Reshape)", "cannot reshape"});

  Model w(13);
  w.input("x", {2, 3});
  w.input("shape", {2});
  w.node("Reshape", {"x", "shape"}, {"y"}, "dyn");
  w.output("y");
  expectError(parseBytes(w.bytes()), {"node 0 'dyn' (Reshape)", "constant"});
}

TEST(OnnxErrors, MissingGraphOutputAndWrongInputCount) {
  Model m = convModel();
  m.output("ghost");
  expectError(parseBytes(m.bytes()), {"ghost"});
  Model g(13);
  g.input("x", {2, 3});
  g.node("Add", {"x"}, {"y"}, "add");
  g.output("y");
  expectError(parseBytes(g.bytes()), {"node 0 'add' (Add)", "inputs"});
}

}  // namespace
}  // namespace kiln::testing
