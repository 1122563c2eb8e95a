// ONNX RMSNormalization (opset 23) through parse -> build -> run, against the definition written
// out here (libonnx-testdata 1.12 has no RMSNormalization node tests); and the refusals
// (stash_type other than float, an axis out of range, a bias input).
#include <cmath>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// X [4, 2, 3] normalised from `axis`, Scale a constant of the normalised dims.
Model rmsNormModel(const std::vector<float>& scale, int64_t axis, int64_t opset) {
  Model m(opset);
  m.input("x", {4, 2, 3});
  m.initFloat("scale", axis == 1 ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3}, scale);
  auto& n = m.node("RMSNormalization", {"x", "scale"}, {"y"});
  attrInt(n, "axis", axis);
  attrFloat(n, "epsilon", 1e-3f);
  m.output("y");
  return m;
}

TEST(OnnxRMSNormalization, OutputMatchesTheDefinition) {
  Rng rng;
  for (int64_t axis : {1, -1}) {
    // Opset 23's op, imported at any opset kiln reads: 17 and its highest, 21.
    const int64_t opset = axis == 1 ? 17 : 21;
    const int64_t len = axis == 1 ? 6 : 3;
    const auto x = rng.floats(24, -4.f, 4.f), scale = rng.floats(size_t(len));
    std::map<std::string, Tensor> out;
    const Status s = run(rmsNormModel(scale, axis, opset), {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> y;
    for (int64_t r = 0; r < 24 / len; ++r) {
      double squares = 0;
      for (int64_t j = 0; j < len; ++j)
        squares += double(x[size_t(r * len + j)]) * x[size_t(r * len + j)];
      const double rms = std::sqrt(squares / double(len) + 1e-3);
      for (int64_t j = 0; j < len; ++j)
        y.push_back(float(x[size_t(r * len + j)] / rms * scale[size_t(j)]));
    }
    EXPECT_EQ(out["y"].dims, makeDims({4, 2, 3}));
    expectNear(out["y"].v, y, 1e-5f, rng.seed);
  }
}

TEST(OnnxRMSNormalization, RefusesOtherStashTypesBadAxesAndABias) {
  std::unique_ptr<INetworkDefinition> net;
  Model stash = rmsNormModel(std::vector<float>(3, 1.f), -1, 17);
  attrInt(*stash.graph().mutable_node(0), "stash_type", 10);
  Status s = parse(stash, net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.toString();
  EXPECT_NE(s.message().find("stash_type 10 is not supported"), std::string::npos) << s.message();

  s = parse(rmsNormModel(std::vector<float>(3, 1.f), 3, 17), net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("axis 3 is out of range for rank 3"), std::string::npos)
      << s.message();

  Model bias(17);
  bias.input("x", {4, 6});
  bias.initFloat("scale", {6}, std::vector<float>(6, 1.f));
  bias.initFloat("b", {6}, std::vector<float>(6, 0.f));
  bias.node("RMSNormalization", {"x", "scale", "b"}, {"y"});
  bias.output("y");
  s = parse(bias, net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("RMSNormalization"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::testing
