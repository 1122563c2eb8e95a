// The index arithmetic of transformer exports (Range, ScatterND, GatherElements, Mod), folded on
// constants or run on tensors, and two export habits of torchvision's Swin: Slice to INT64_MAX ("to
// the end") and Dropout in training mode with ratio 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// Gathers x[indices] along axis 0: the way these tests read a folded integer constant.
void gather(Model& m, const std::string& indices, const std::string& out) {
  attrInt(m.node("Gather", {"x", indices}, {out}), "axis", 0);
}

TEST(OnnxIndex, RangeFoldsForIntegersAndFloats) {
  Rng rng;
  Model m(17);
  m.input("x", {6});
  m.input("z", {2});
  // Integers, negative delta, a length that needs rounding up: [5, 3, 1].
  m.initInts("s", {5}, true);
  m.initInts("l", {-1}, true);
  m.initInts("d", {-2}, true);
  m.node("Range", {"s", "l", "d"}, {"idx"});
  gather(m, "idx", "picked");
  // Floats: 1, 3 (limit 5 is exclusive).
  m.initFloat("fs", {}, {1.f});
  m.initFloat("fl", {}, {5.f});
  m.initFloat("fd", {}, {2.f});
  m.node("Range", {"fs", "fl", "fd"}, {"r"});
  m.node("Add", {"z", "r"}, {"shifted"});
  m.output("picked");
  m.output("shifted");
  const auto x = rng.values(6), z = rng.values(2);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}, {"z", z}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectNear(out["picked"].v, {x[5], x[3], x[1]}, 0.f, rng.seed);
  expectNear(out["shifted"].v, {z[0] + 1.f, z[1] + 3.f}, 0.f, rng.seed);
}

TEST(OnnxIndex, RangeErrorsSayWhat) {
  Model m(17);
  m.input("x", {6});
  m.initInts("s", {0}, true);
  m.initInts("l", {4}, true);
  m.initInts("d", {0}, true);
  m.node("Range", {"s", "l", "d"}, {"idx"});
  gather(m, "idx", "y");
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("delta must not be 0"), std::string::npos) << s.toString();
  EXPECT_NE(s.message().find("(Range)"), std::string::npos) << s.toString();
}

TEST(OnnxIndex, ScatterNdFoldsWithEveryReduction) {
  Rng rng;
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {{"none", {1, 10, 3, 20}},
                                                                         {"add", {1, 12, 3, 24}},
                                                                         {"mul", {1, 20, 3, 80}},
                                                                         {"max", {1, 10, 3, 20}},
                                                                         {"min", {1, 2, 3, 4}}};
  for (const auto& [reduction, want] : cases) {
    SCOPED_TRACE(reduction);
    // max and min are opset 18's; kiln takes them at 16 too.
    Model m(reduction == "max" || reduction == "min" ? 18 : 16);
    m.input("x", {4});
    m.initFloat("data", {4}, {1, 2, 3, 4});
    m.initInts("ind", {1, 3}, std::vector<int64_t>{2, 1});
    m.initFloat("upd", {2}, {10, 20});
    attrString(m.node("ScatterND", {"data", "ind", "upd"}, {"sc"}), "reduction", reduction);
    m.node("Add", {"x", "sc"}, {"y"});
    m.output("y");
    const auto x = rng.values(4);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> ref;
    for (size_t k = 0; k < 4; ++k) ref.push_back(x[k] + want[k]);
    expectNear(out["y"].v, ref, 0.f, rng.seed);
  }
}

TEST(OnnxIndex, ScatterNdSlicesAndBadIndices) {
  // Index tuples of length 1 into [3, 2] address rows; index -1 is the last row.
  Rng rng;
  Model m(13);
  m.input("x", {3, 2});
  m.initFloat("data", {3, 2}, {0, 0, 0, 0, 0, 0});
  m.initInts("ind", {-1, 0}, std::vector<int64_t>{2, 1});
  m.initFloat("upd", {2, 2}, {5, 6, 7, 8});
  m.node("ScatterND", {"data", "ind", "upd"}, {"sc"});
  m.node("Add", {"x", "sc"}, {"y"});
  m.output("y");
  const auto x = rng.values(6);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectNear(out["y"].v, {x[0] + 7, x[1] + 8, x[2], x[3], x[4] + 5, x[5] + 6}, 0.f, rng.seed);

  m.graph().mutable_initializer(1)->set_int64_data(0, 3);  // row 3 of 3
  std::unique_ptr<INetworkDefinition> net;
  s = parse(m, net);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("index 3 on axis 0 is outside [-3, 3)"), std::string::npos)
      << s.toString();
}

TEST(OnnxIndex, GatherElementsFoldsOnConstants) {
  // data [2, 3], indices [2, 2] along axis 1, -1 meaning the last column:
  // [[d00, d02], [d12, d11]].
  Rng rng;
  Model m(13);
  m.input("x", {2, 2});
  m.initFloat("data", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.initInts("ind", {0, -1, 2, 1}, std::vector<int64_t>{2, 2});
  attrInt(m.node("GatherElements", {"data", "ind"}, {"g"}), "axis", 1);
  m.node("Add", {"x", "g"}, {"y"});
  m.output("y");
  const auto x = rng.values(4);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectNear(out["y"].v, {x[0] + 1, x[1] + 3, x[2] + 6, x[3] + 5}, 0.f, rng.seed);

  m.graph().mutable_initializer(1)->set_int64_data(2, 3);  // column 3 of 3
  std::unique_ptr<INetworkDefinition> net;
  s = parse(m, net);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("index 3 is outside [-3, 3)"), std::string::npos) << s.toString();
}

TEST(OnnxIndex, GatherElementsOnARunTimeTensorIsRefusedByName) {
  Model m(13);
  m.input("x", {2, 3});
  m.initInts("ind", {0, 1}, std::vector<int64_t>{2, 1});
  m.node("GatherElements", {"x", "ind"}, {"y"});
  m.output("y");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("GatherElements is supported on constant inputs only"),
            std::string::npos)
      << s.toString();
}

TEST(OnnxIndex, ModOnTensorsAndFolded) {
  Rng rng;
  Model m(13);
  m.input("x", {4});
  m.input("f", {5});
  // Folded, integers, Python's sign: Range(-3, 3) mod 4 = [1, 2, 3, 0, 1, 2].
  m.initInts("s", {-3}, true);
  m.initInts("l", {3}, true);
  m.initInts("d", {1}, true);
  m.node("Range", {"s", "l", "d"}, {"r"});
  m.initInts("four", {4}, true);
  m.node("Mod", {"r", "four"}, {"idx"});
  gather(m, "idx", "picked");
  // At run time, floats, C's fmod.
  m.initFloat("div", {1}, {0.75f});
  attrInt(m.node("Mod", {"f", "div"}, {"rem"}), "fmod", 1);
  m.output("picked");
  m.output("rem");
  const auto x = rng.values(4), f = rng.values(5);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}, {"f", f}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectNear(out["picked"].v, {x[1], x[2], x[3], x[0], x[1], x[2]}, 0.f, rng.seed);
  std::vector<float> ref;
  for (float v : f) ref.push_back(std::fmod(v, 0.75f));
  expectNear(out["rem"].v, ref, 0.f, rng.seed);
}

TEST(OnnxIndex, IntegerArithmeticRunsOnRunTimeTensors) {
  // Index math at run time (transformers 5's padding mask: batch * sequence + position): int64
  // mul, add, sub and a truncating div on a tensor cast from the input, then max and min.
  Model m(13);
  m.input("x", {8});
  attrInt(m.node("Cast", {"x"}, {"i"}), "to", onnx::TensorProto::INT64);
  m.initInts("three", {3}, true);
  m.initInts("seven", {7}, true);
  m.initInts("minus_two", {-2}, true);
  m.node("Mul", {"i", "three"}, {"a"});
  m.node("Add", {"a", "seven"}, {"b"});
  m.node("Div", {"b", "minus_two"}, {"c"});
  m.node("Sub", {"c", "i"}, {"y"});
  m.node("Max", {"i", "c"}, {"hi"});
  m.node("Min", {"i", "c"}, {"lo"});
  m.output("y");
  m.output("hi");
  m.output("lo");
  Rng rng;
  std::vector<float> x;
  for (int k = 0; k < 8; ++k) x.push_back(float(rng.uniformInt(-50, 50)));
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> y, hi, lo;
  for (float v : x) {
    const int64_t i = int64_t(v), c = (i * 3 + 7) / -2;  // C++ divides toward zero, as ONNX
    y.push_back(float(c - i));
    hi.push_back(float(std::max(i, c)));
    lo.push_back(float(std::min(i, c)));
  }
  expectNear(out["y"].v, y, 0.f, rng.seed);
  expectNear(out["hi"].v, hi, 0.f, rng.seed);
  expectNear(out["lo"].v, lo, 0.f, rng.seed);
}

TEST(OnnxIndex, IntegerPowAtRunTimeIsRefused) {
  Model m(13);
  m.input("x", {4});
  attrInt(m.node("Cast", {"x"}, {"i"}), "to", onnx::TensorProto::INT64);
  m.initInts("two", {2}, true);
  m.node("Pow", {"i", "two"}, {"y"}, "square");
  m.output("y");
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", {1.f, 2.f, 3.f, 4.f}}}, out);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.toString();
  EXPECT_NE(s.message().find("'square' (Pow): arithmetic on int64 run-time tensors is not "
                             "supported (floating point only)"),
            std::string::npos)
      << s.toString();
}

TEST(OnnxIndex, FloatModNeedsFmod) {
  Model m(13);
  m.input("f", {5});
  m.initFloat("div", {1}, {0.75f});
  m.node("Mod", {"f", "div"}, {"rem"});
  m.output("rem");
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs fmod=1"), std::string::npos) << s.toString();
}

TEST(OnnxIndex, SliceToInt64MaxMeansToTheEnd) {
  // PyTorch writes x[2:] as ends = INT64_MAX, which a double cannot hold (it rounds to 2^63).
  Rng rng;
  Model m(13);
  m.input("x", {6});
  m.initInts("st", {2});
  m.initInts("en", {std::numeric_limits<int64_t>::max()});
  m.node("Slice", {"x", "st", "en"}, {"tail"});
  m.initInts("st2", {-1});
  m.initInts("en2", {std::numeric_limits<int64_t>::min()});
  m.initInts("ax", {0});
  m.initInts("step", {-2});
  m.node("Slice", {"x", "st2", "en2", "ax", "step"}, {"odd_reversed"});
  m.output("tail");
  m.output("odd_reversed");
  const auto x = rng.values(6);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  expectNear(out["tail"].v, {x[2], x[3], x[4], x[5]}, 0.f, rng.seed);
  expectNear(out["odd_reversed"].v, {x[5], x[3], x[1]}, 0.f, rng.seed);
}

TEST(OnnxIndex, DropoutInTrainingModeIsIdentityOnlyWithRatioZero) {
  Rng rng;
  for (float ratio : {0.f, 0.1f}) {
    SCOPED_TRACE(ratio);
    Model m(13);
    m.input("x", {2, 3});
    m.initFloat("ratio", {}, {ratio});
    auto* t = m.graph().add_initializer();
    t->set_name("training");
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(1);
    m.node("Dropout", {"x", "ratio", "training"}, {"y"});
    m.output("y");
    const auto x = rng.values(6);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    if (ratio == 0.f) {
      ASSERT_TRUE(s.isOk()) << s.toString();
      expectNear(out["y"].v, x, 0.f, rng.seed);
    } else {
      EXPECT_EQ(s.code(), StatusCode::kUnsupported);
      EXPECT_NE(s.message().find("training mode is not supported"), std::string::npos)
          << s.toString();
    }
  }
}

}  // namespace
}  // namespace kiln::testing
