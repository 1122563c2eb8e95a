// ONNX GroupNormalization through parse -> build -> run, against the definition written out here
// (libonnx-testdata 1.12 predates the op): opset 18's per-group Scale and B, as constants (folded
// to per-channel) and as graph inputs (reshape, expand, reshape), and opset 21's per-channel ones;
// and the refusals (num_groups missing or not dividing C, a Scale of the other opset's form,
// stash_type other than float).
#include <cmath>

#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

constexpr int64_t kN = 2, kC = 6, kS = 5, kGroups = 3;

// Y for X [2, 6, 5] in 3 groups, with per-channel scale and bias.
std::vector<float> definition(const std::vector<float>& x, const std::vector<float>& scale,
                              const std::vector<float>& bias, double eps) {
  const int64_t per = kC / kGroups, count = per * kS;
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < kN; ++b)
    for (int64_t g = 0; g < kGroups; ++g) {
      const int64_t begin = (b * kC + g * per) * kS;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < count; ++k) mean += x[size_t(begin + k)];
      mean /= double(count);
      for (int64_t k = 0; k < count; ++k)
        var += (x[size_t(begin + k)] - mean) * (x[size_t(begin + k)] - mean);
      var /= double(count);
      for (int64_t k = 0; k < count; ++k) {
        const size_t c = size_t(g * per + k / kS);
        y[size_t(begin + k)] =
            float((x[size_t(begin + k)] - mean) / std::sqrt(var + eps) * scale[c] + bias[c]);
      }
    }
  return y;
}

// scale and bias of `count` values, as initializers or (asInputs) graph inputs.
Model groupNormModel(int64_t opset, int64_t count, bool asInputs, const std::vector<float>& scale,
                     const std::vector<float>& bias) {
  Model m(opset);
  m.input("x", {kN, kC, kS});
  if (asInputs) {
    m.input("scale", {count});
    m.input("bias", {count});
  } else {
    m.initFloat("scale", {count}, scale);
    m.initFloat("bias", {count}, bias);
  }
  auto& n = m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"});
  attrInt(n, "num_groups", kGroups);
  attrFloat(n, "epsilon", 1e-3f);
  m.output("y");
  return m;
}

TEST(OnnxGroupNormalization, PerGroupFormOfOpset18) {
  Rng rng;
  const auto x = rng.floats(kN * kC * kS), scale = rng.floats(kGroups), bias = rng.floats(kGroups);
  std::vector<float> wideScale, wideBias;
  for (int64_t c = 0; c < kC; ++c) {
    wideScale.push_back(scale[size_t(c / (kC / kGroups))]);
    wideBias.push_back(bias[size_t(c / (kC / kGroups))]);
  }
  const auto want = definition(x, wideScale, wideBias, 1e-3);
  for (int64_t opset : {17, 18}) {
    for (bool asInputs : {false, true}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + (asInputs ? ", inputs" : ", constants"));
      std::map<std::string, Tensor> out;
      std::map<std::string, std::vector<float>> feeds = {{"x", x}};
      if (asInputs) {
        feeds["scale"] = scale;
        feeds["bias"] = bias;
      }
      const Status s = run(groupNormModel(opset, kGroups, asInputs, scale, bias), feeds, out);
      ASSERT_TRUE(s.isOk()) << s.toString();
      EXPECT_EQ(out["y"].dims, makeDims({kN, kC, kS}));
      expectNear(out["y"].v, want, 1e-5f, rng.seed);
    }
  }
}

TEST(OnnxGroupNormalization, PerChannelFormOfOpset21) {
  Rng rng;
  const auto x = rng.floats(kN * kC * kS), scale = rng.floats(kC), bias = rng.floats(kC);
  for (bool asInputs : {false, true}) {
    std::map<std::string, Tensor> out;
    std::map<std::string, std::vector<float>> feeds = {{"x", x}};
    if (asInputs) {
      feeds["scale"] = scale;
      feeds["bias"] = bias;
    }
    const Status s = run(groupNormModel(21, kC, asInputs, scale, bias), feeds, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    expectNear(out["y"].v, definition(x, scale, bias, 1e-3), 1e-5f, rng.seed);
  }
}

TEST(OnnxGroupNormalization, Refusals) {
  std::unique_ptr<INetworkDefinition> net;
  const std::vector<float> three(3, 1.f), six(6, 1.f);
  // Per-channel values at opset 18: the message names opset 21's form.
  Status s = parse(groupNormModel(18, kC, false, six, six), net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("scale is [6], expected [3] (one per group at opset 18)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("opset 21's form"), std::string::npos) << s.message();
  s = parse(groupNormModel(21, kGroups, false, three, three), net);
  EXPECT_NE(s.message().find("expected [6] (one per channel at opset 21)"), std::string::npos)
      << s.message();

  Model groups = groupNormModel(18, kGroups, false, three, three);
  groups.graph().mutable_node(0)->mutable_attribute(0)->set_i(4);  // num_groups
  s = parse(groups, net);
  EXPECT_NE(s.message().find("num_groups 4 does not divide the 6 channels"), std::string::npos)
      << s.message();

  Model missing = groupNormModel(18, kGroups, false, three, three);
  missing.graph().mutable_node(0)->clear_attribute();
  s = parse(missing, net);
  EXPECT_NE(s.message().find("'num_groups' is required"), std::string::npos) << s.message();

  Model stash = groupNormModel(21, kC, false, six, six);
  attrInt(*stash.graph().mutable_node(0), "stash_type", 10);
  s = parse(stash, net);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.toString();
}

}  // namespace
}  // namespace kiln::testing
