// The forms that changed in opsets 18 to 21 (PyTorch 2's exporter writes them): Reduce* axes as
// a constant input and noop_with_empty_axes, Split's num_outputs, Pad's axes input, Resize's axes
// and keep_aspect_ratio_policy; and what kiln refuses by name there (Resize antialias and
// half_pixel_symmetric, Pad's wrap mode). The older forms of the same ops are onnx_ops_test.cpp's.
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

TEST(OnnxOpset18, ReduceAxesAsAnInput) {
  Rng rng;
  Model m(18);
  m.input("x", {2, 3, 4});
  m.initInts("axes", {1});
  auto& mean = m.node("ReduceMean", {"x", "axes"}, {"mean"});
  attrInt(mean, "keepdims", 0);
  m.initInts("last", {-1});
  m.node("ReduceMax", {"x", "last"}, {"max"});
  m.node("ReduceSum", {"x"}, {"all"});                 // no axes: every axis
  auto& noop = m.node("ReduceMean", {"x"}, {"kept"});  // no axes and noop: x itself
  attrInt(noop, "noop_with_empty_axes", 1);
  m.node("Neg", {"kept"}, {"same"});
  for (const char* o : {"mean", "max", "all", "same"}) m.output(o);
  const auto x = rng.values(24);
  std::map<std::string, Tensor> out;
  const Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> rm(8, 0.f), rx(6, -1e30f);
  float all = 0;
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < 4; ++j) {
        const float v = x[size_t((b * 3 + c) * 4 + j)];
        rm[size_t(b * 4 + j)] += v / 3;
        rx[size_t(b * 3 + c)] = std::max(rx[size_t(b * 3 + c)], v);
        all += v;
      }
  EXPECT_EQ(out["mean"].dims, makeDims({2, 4}));
  EXPECT_EQ(out["max"].dims, makeDims({2, 3, 1}));
  EXPECT_EQ(out["all"].dims, makeDims({1, 1, 1}));
  expectNear(out["mean"].v, rm, 1e-5f, rng.seed);
  expectNear(out["max"].v, rx, 0.f, rng.seed);
  expectNear(out["all"].v, {all}, 1e-5f, rng.seed);
  std::vector<float> negated;
  for (float v : x) negated.push_back(-v);
  expectNear(out["same"].v, negated, 0.f, rng.seed);

  // The attribute form is opset 17's; at 18 the input is the one place for axes.
  Model old(17);
  old.input("x", {2, 3});
  old.initInts("axes", {1});
  old.node("ReduceMean", {"x", "axes"}, {"y"});
  old.output("y");
  std::unique_ptr<INetworkDefinition> net;
  const Status e = parse(old, net);
  EXPECT_NE(e.message().find("axes is an attribute before opset 18"), std::string::npos)
      << e.message();
}

TEST(OnnxOpset18, SplitNumOutputs) {
  Rng rng;
  Model m(18);
  m.input("x", {2, 7});
  auto& sp = m.node("Split", {"x"}, {"a", "b", "c"});
  attrInt(sp, "axis", 1);
  attrInt(sp, "num_outputs", 3);  // ceil(7 / 3) = 3: parts 3, 3, 1
  for (const char* o : {"a", "b", "c"}) m.output(o);
  const auto x = rng.values(14);
  std::map<std::string, Tensor> out;
  const Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(out["a"].dims, makeDims({2, 3}));
  EXPECT_EQ(out["b"].dims, makeDims({2, 3}));
  EXPECT_EQ(out["c"].dims, makeDims({2, 1}));
  expectNear(out["c"].v, {x[6], x[13]}, 0.f, rng.seed);
  expectNear(out["b"].v, {x[3], x[4], x[5], x[10], x[11], x[12]}, 0.f, rng.seed);

  std::unique_ptr<INetworkDefinition> net;
  Model wrong(18);
  wrong.input("x", {2, 7});
  attrInt(wrong.node("Split", {"x"}, {"a", "b"}), "num_outputs", 3);
  wrong.output("a");
  Status e = parse(wrong, net);
  EXPECT_NE(e.message().find("num_outputs is 3 but the node has 2 outputs"), std::string::npos)
      << e.message();
  Model none(18);
  none.input("x", {2, 7});
  none.node("Split", {"x"}, {"a", "b"});
  none.output("a");
  e = parse(none, net);
  EXPECT_NE(e.message().find("split input or the num_outputs attribute"), std::string::npos)
      << e.message();
  // Four parts of ceil(5 / 4) = 2 would leave the last empty.
  Model empty(18);
  empty.input("x", {5});
  attrInt(empty.node("Split", {"x"}, {"a", "b", "c", "d"}), "num_outputs", 4);
  empty.output("a");
  e = parse(empty, net);
  EXPECT_NE(e.message().find("the last would be empty"), std::string::npos) << e.message();
}

TEST(OnnxOpset18, PadAxesInput) {
  Rng rng;
  Model m(18);
  m.input("x", {2, 3});
  m.initInts("pads", {1, 2});  // axis -1 only: one before, two after
  m.initFloat("value", {}, {7.f});
  m.initInts("axes", {-1});
  m.node("Pad", {"x", "pads", "value", "axes"}, {"y"});
  m.output("y");
  const auto x = rng.values(6);
  std::map<std::string, Tensor> out;
  const Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(out["y"].dims, makeDims({2, 6}));
  expectNear(out["y"].v, {7, x[0], x[1], x[2], 7, 7, 7, x[3], x[4], x[5], 7, 7}, 0.f, rng.seed);

  std::unique_ptr<INetworkDefinition> net;
  Model bad(18);
  bad.input("x", {2, 3});
  bad.initInts("pads", {1, 2, 0, 0});
  bad.initInts("axes", {1});
  bad.node("Pad", {"x", "pads", "", "axes"}, {"y"});
  bad.output("y");
  Status e = parse(bad, net);
  EXPECT_NE(e.message().find("pads has 4 values for 1 axes"), std::string::npos) << e.message();
  Model wrap(19);
  wrap.input("x", {2, 3});
  wrap.initInts("pads", {0, 1, 0, 1});
  attrString(wrap.node("Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
  wrap.output("y");
  e = parse(wrap, net);
  EXPECT_EQ(e.code(), StatusCode::kUnsupported) << e.toString();
  EXPECT_NE(e.message().find("mode 'wrap' is not supported"), std::string::npos) << e.message();
}

TEST(OnnxOpset18, ResizeAxesAndKeepAspectRatio) {
  Rng rng;
  const auto x = rng.values(1 * 1 * 2 * 4);
  // Nearest, asymmetric and floor: output (i, j) reads input (floor(i / s), floor(j / s)).
  auto nearest = [&](int64_t oh, int64_t ow, double sh, double sw) {
    std::vector<float> y;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        y.push_back(x[size_t(int64_t(double(i) / sh) * 4 + int64_t(double(j) / sw))]);
    return y;
  };
  struct Case {
    std::vector<int64_t> axes;
    std::vector<int64_t> sizes;
    std::vector<float> scales;
    const char* policy;
    Dims want;
    double sh, sw;
  };
  const Case cases[] = {
      {{2, 3}, {}, {2.f, 1.5f}, "stretch", makeDims({1, 1, 4, 6}), 2, 1.5},
      {{-1}, {8}, {}, "stretch", makeDims({1, 1, 2, 8}), 1, 2},
      // sizes 6 x 6 for 2 x 4: not_larger takes 1.5 (6 / 4) for both: 3 x 6.
      {{2, 3}, {6, 6}, {}, "not_larger", makeDims({1, 1, 3, 6}), 1.5, 1.5},
      // not_smaller takes 3 (6 / 2): 6 x 12.
      {{2, 3}, {6, 6}, {}, "not_smaller", makeDims({1, 1, 6, 12}), 3, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.policy) + " " + std::to_string(c.axes.size()) + " axes");
    Model m(18);
    m.input("x", {1, 1, 2, 4});
    std::vector<std::string> in = {"x", ""};
    if (!c.scales.empty()) {
      m.initFloat("scales", {int64_t(c.scales.size())}, c.scales);
      in.push_back("scales");
    } else {
      m.initInts("sizes", c.sizes);
      in.push_back("");
      in.push_back("sizes");
    }
    auto& r = m.node("Resize", in, {"y"});
    attrString(r, "coordinate_transformation_mode", "asymmetric");
    attrString(r, "nearest_mode", "floor");
    attrInts(r, "axes", c.axes);
    attrString(r, "keep_aspect_ratio_policy", c.policy);
    m.output("y");
    std::map<std::string, Tensor> out;
    const Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(out["y"].dims, c.want);
    expectNear(out["y"].v, nearest(c.want.d[2], c.want.d[3], c.sh, c.sw), 0.f, rng.seed);
  }

  std::unique_ptr<INetworkDefinition> net;
  for (const char* what : {"antialias", "half_pixel_symmetric"}) {
    Model m(19);
    m.input("x", {1, 1, 2, 4});
    m.initFloat("scales", {4}, {1, 1, 2, 2});
    auto& r = m.node("Resize", {"x", "", "scales"}, {"y"});
    if (std::string(what) == "antialias")
      attrInt(r, "antialias", 1);
    else
      attrString(r, "coordinate_transformation_mode", what);
    m.output("y");
    const Status e = parse(m, net);
    EXPECT_EQ(e.code(), StatusCode::kUnsupported) << e.toString();
    EXPECT_NE(e.message().find(what), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace kiln::testing
