// ONNX LayerNormalization through parse -> build -> run: Y from the built-in layer, the optional
// Mean and InvStdDev outputs from the importer's reduce layers, against the definition written
// out here; and the refusals (stash_type other than float, an axis out of range).
#include <cmath>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// X [4, 2, 3] normalised over its last two dims (axis 1), Scale and B constants [2, 3].
Model layerNormModel(const std::vector<float>& scale, const std::vector<float>& bias,
                     bool statistics, int64_t axis = 1) {
  Model m(17);
  m.input("x", {4, 2, 3});
  m.initFloat("scale", {2, 3}, scale);
  m.initFloat("bias", {2, 3}, bias);
  auto& n = m.node("LayerNormalization", {"x", "scale", "bias"},
                   statistics ? std::vector<std::string>{"y", "mean", "inv_std_dev"}
                              : std::vector<std::string>{"y"});
  attrInt(n, "axis", axis);
  attrFloat(n, "epsilon", 1e-3f);
  m.output("y");
  if (statistics) {
    m.output("mean");
    m.output("inv_std_dev");
  }
  return m;
}

TEST(OnnxLayerNormalization, OutputsMatchTheDefinition) {
  Rng rng;
  const auto x = rng.floats(24, 5.f, 9.f), scale = rng.floats(6), bias = rng.floats(6);
  for (bool statistics : {false, true}) {
    std::map<std::string, Tensor> out;
    const Status s = run(layerNormModel(scale, bias, statistics), {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> y, mean, inv;
    for (int r = 0; r < 4; ++r) {
      double m = 0, var = 0;
      for (int j = 0; j < 6; ++j) m += x[size_t(r * 6 + j)];
      m /= 6;
      for (int j = 0; j < 6; ++j) var += (x[size_t(r * 6 + j)] - m) * (x[size_t(r * 6 + j)] - m);
      var /= 6;
      const double invStd = 1 / std::sqrt(var + 1e-3);
      for (int j = 0; j < 6; ++j)
        y.push_back(
            float((x[size_t(r * 6 + j)] - m) * invStd * scale[size_t(j)] + bias[size_t(j)]));
      mean.push_back(float(m));
      inv.push_back(float(invStd));
    }
    expectNear(out["y"].v, y, 1e-5f, rng.seed);
    if (!statistics) continue;
    EXPECT_EQ(out["mean"].dims, makeDims({4, 1, 1}));
    EXPECT_EQ(out["inv_std_dev"].dims, makeDims({4, 1, 1}));
    expectNear(out["mean"].v, mean, 1e-5f, rng.seed);
    expectNear(out["inv_std_dev"].v, inv, 1e-4f, rng.seed);
  }
}

TEST(OnnxLayerNormalization, RefusesOtherStashTypesAndBadAxes) {
  std::unique_ptr<INetworkDefinition> net;
  Model stash = layerNormModel(std::vector<float>(6, 1.f), std::vector<float>(6, 0.f), false);
  attrInt(*stash.graph().mutable_node(0), "stash_type", 10);
  Status s = parse(stash, net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.toString();
  EXPECT_NE(s.message().find("stash_type 10 is not supported"), std::string::npos) << s.message();

  const Model axis =
      layerNormModel(std::vector<float>(6, 1.f), std::vector<float>(6, 0.f), false, 3);
  s = parse(axis, net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("axis 3 is out of range for rank 3"), std::string::npos)
      << s.message();

  // Scale of the wrong extent: the layer's shape rule names it.
  Model m(17);
  m.input("x", {4, 6});
  m.initFloat("scale", {5}, std::vector<float>(5, 1.f));
  m.node("LayerNormalization", {"x", "scale"}, {"y"});
  m.output("y");
  s = parse(m, net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("Scale (input 1) [5] does not broadcast"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace kiln::testing
