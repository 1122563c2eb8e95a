// Op families through parse -> build -> run, against plain references written here.
#include <algorithm>

#include "core/plan.h"
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

// NCHW convolution, one group, square padding `pad`, stride 1.
std::vector<float> conv(const std::vector<float>& x, int64_t c, int64_t h, int64_t w,
                        const std::vector<float>& k, int64_t oc, int64_t kh, int64_t pad,
                        const std::vector<float>& bias) {
  const int64_t oh = h + 2 * pad - kh + 1, ow = w + 2 * pad - kh + 1;
  std::vector<float> y(size_t(oc * oh * ow));
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = bias.empty() ? 0 : bias[size_t(o)];
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t a = 0; a < kh; ++a)
            for (int64_t b = 0; b < kh; ++b) {
              const int64_t yy = i + a - pad, xx = j + b - pad;
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              acc += double(x[size_t((ci * h + yy) * w + xx)]) *
                     k[size_t(((o * c + ci) * kh + a) * kh + b)];
            }
        y[size_t((o * oh + i) * ow + j)] = float(acc);
      }
  return y;
}

int countLayers(INetworkDefinition& net, LayerType type) {
  int n = 0;
  for (int32_t i = 0; i < net.getNbLayers(); ++i) n += net.getLayer(i)->getType() == type;
  return n;
}

// Conv and ConvTranspose whose weights and bias are graph inputs (as the ONNX node tests feed
// them, and as TensorRT accepts them): the same layers with W and the bias as inputs, giving what
// the model with those values as initializers gives; the BatchNormalization Mul after the Conv is
// not folded into weights that are not constants.
TEST(OnnxOps, ConvAndConvTransposeTakeWeightsAtRunTime) {
  Rng rng;
  const std::vector<float> x = rng.values(2 * 2 * 5 * 5), w = rng.values(3 * 2 * 3 * 3),
                           b = rng.values(3), wt = rng.values(2 * 3 * 2 * 2);
  auto model = [&](bool runTime) {
    Model m(13);
    m.input("x", {2, 2, 5, 5});
    if (runTime) {
      m.input("w", {3, 2, 3, 3});
      m.input("b", {3});
      m.input("wt", {2, 3, 2, 2});
    } else {
      m.initFloat("w", {3, 2, 3, 3}, w);
      m.initFloat("b", {3}, b);
      m.initFloat("wt", {2, 3, 2, 2}, wt);
    }
    m.initFloat("scale", {1, 3, 1, 1}, {0.5f, -2.f, 3.f});
    attrInts(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    m.node("Mul", {"c", "scale"}, {"y"}, "scale");
    attrInts(m.node("ConvTranspose", {"x", "wt"}, {"t"}, "up"), "strides", {2, 2});
    m.output("y");
    m.output("t");
    return m;
  };
  std::map<std::string, Tensor> got, want;
  Status s = run(model(true), {{"x", x}, {"w", w}, {"b", b}, {"wt", wt}}, got);
  ASSERT_TRUE(s.isOk()) << s.toString();
  s = run(model(false), {{"x", x}}, want);
  ASSERT_TRUE(s.isOk()) << s.toString();
  for (const char* name : {"y", "t"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(got[name].dims, want[name].dims);
    expectNear(got[name].v, want[name].v, 1e-5f, rng.seed);
  }
}

// BatchNormalization whose parameters are graph inputs: the same arithmetic as layers, giving
// what the model with those values as initializers gives.
TEST(OnnxOps, BatchNormalizationTakesItsParametersAtRunTime) {
  Rng rng;
  const std::vector<float> x = rng.values(2 * 3 * 4), scale = rng.values(3), bias = rng.values(3),
                           mean = rng.values(3), var = rng.values(3, 0.1f, 2.f);
  auto model = [&](bool runTime) {
    Model m(13);
    m.input("x", {2, 3, 4});
    for (const auto& [name, v] : std::vector<std::pair<std::string, std::vector<float>>>{
             {"s", scale}, {"b", bias}, {"m", mean}, {"v", var}}) {
      if (runTime)
        m.input(name, {3});
      else
        m.initFloat(name, {3}, v);
    }
    attrFloat(m.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn"), "epsilon",
              1e-3f);
    m.output("y");
    return m;
  };
  std::map<std::string, Tensor> got, want;
  Status s = run(model(true), {{"x", x}, {"s", scale}, {"b", bias}, {"m", mean}, {"v", var}}, got);
  ASSERT_TRUE(s.isOk()) << s.toString();
  s = run(model(false), {{"x", x}}, want);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(got["y"].dims, want["y"].dims);
  expectNear(got["y"].v, want["y"].v, 1e-5f, rng.seed);
}

// The importer emits Conv, then BatchNormalization as Mul + Add by per-channel constants; the
// builder's affine folding (src/builder/passes) folds both into the convolution.
TEST(OnnxOps, ConvBatchNormReluFoldsTheNormalisation) {
  Rng rng;
  Model m(13);
  m.input("x", {1, 3, 6, 7});
  auto w = rng.values(4 * 3 * 9), b = rng.values(4);
  auto gamma = rng.values(4), beta = rng.values(4), mean = rng.values(4),
       var = rng.values(4, 0.5f, 2.f);
  m.initFloat("w", {4, 3, 3, 3}, w);
  m.initFloat("b", {4}, b);
  m.initFloat("gamma", {4}, gamma);
  m.initFloat("beta", {4}, beta);
  m.initFloat("mean", {4}, mean);
  m.initFloat("var", {4}, var);
  auto& c = m.node("Conv", {"x", "w", "b"}, {"c"});
  attrInts(c, "pads", {1, 1, 1, 1});
  attrInts(c, "kernel_shape", {3, 3});
  auto& bn = m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"});
  attrFloat(bn, "epsilon", 1e-3f);
  m.node("Relu", {"bn"}, {"y"});
  m.output("y");

  std::unique_ptr<INetworkDefinition> net;
  ASSERT_TRUE(parse(m, net).isOk());
  EXPECT_EQ(countLayers(*net, LayerType::kCONVOLUTION), 1);
  EXPECT_EQ(countLayers(*net, LayerType::kELEMENTWISE), 2) << "the network keeps BN as Mul + Add";

  auto x = rng.values(3 * 6 * 7);
  std::map<std::string, Tensor> out;
  std::vector<uint8_t> bytes;
  Status s = run(m, {{"x", x}}, out, &bytes);
  ASSERT_TRUE(s.isOk()) << s.toString();
  plan::Plan plan;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), plan).isOk());
  std::vector<LayerType> steps;
  for (const plan::Step& step : plan.steps) steps.push_back(step.type);
  EXPECT_EQ(steps, (std::vector<LayerType>{LayerType::kCONVOLUTION}))
      << "the plan should have folded BN into the convolution and fused the ReLU into it";
  auto ref = conv(x, 3, 6, 7, w, 4, 3, 1, b);
  for (size_t k = 0; k < ref.size(); ++k) {
    const size_t ch = k / 42;
    float v = (ref[k] - mean[ch]) / std::sqrt(var[ch] + 1e-3f) * gamma[ch] + beta[ch];
    ref[k] = std::max(v, 0.f);
  }
  EXPECT_EQ(out["y"].dims, makeDims({1, 4, 6, 7}));
  expectNear(out["y"].v, ref, 1e-4f, rng.seed);
}

TEST(OnnxOps, Conv1dBatchNormFoldsThroughTheReshape) {
  // Conv1d is a 2-D convolution between two reshapes; the BN after it still folds in the plan.
  Rng rng;
  Model m(13);
  m.input("x", {2, 3, 9});
  auto w = rng.values(4 * 3 * 3), gamma = rng.values(4), beta = rng.values(4), mean = rng.values(4),
       var = rng.values(4, 0.5f, 2.f);
  m.initFloat("w", {4, 3, 3}, w);
  m.initFloat("gamma", {4}, gamma);
  m.initFloat("beta", {4}, beta);
  m.initFloat("mean", {4}, mean);
  m.initFloat("var", {4}, var);
  auto& c = m.node("Conv", {"x", "w"}, {"c"});
  attrInts(c, "pads", {1, 1});
  m.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"});
  m.output("y");
  auto x = rng.values(2 * 3 * 9);
  std::map<std::string, Tensor> out;
  std::vector<uint8_t> bytes;
  Status s = run(m, {{"x", x}}, out, &bytes);
  ASSERT_TRUE(s.isOk()) << s.toString();
  plan::Plan plan;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), plan).isOk());
  for (const plan::Step& step : plan.steps)
    EXPECT_NE(step.type, LayerType::kELEMENTWISE) << "BN left in the plan: " << step.layerName;
  std::vector<float> ref(2 * 4 * 9);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t i = 0; i < 9; ++i) {
        double acc = 0;
        for (int64_t ci = 0; ci < 3; ++ci)
          for (int64_t a = 0; a < 3; ++a) {
            const int64_t j = i + a - 1;
            if (j >= 0 && j < 9)
              acc += double(x[size_t((n * 3 + ci) * 9 + j)]) * w[size_t((k * 3 + ci) * 3 + a)];
          }
        ref[size_t((n * 4 + k) * 9 + i)] =
            float((acc - mean[size_t(k)]) / std::sqrt(var[size_t(k)] + 1e-5f) * gamma[size_t(k)] +
                  beta[size_t(k)]);
      }
  expectNear(out["y"].v, ref, 1e-4f, rng.seed);
}

TEST(OnnxOps, BatchNormWithoutConvBecomesScaleAndShift) {
  Rng rng;
  Model m(9);
  m.input("x", {2, 3, 4});
  auto gamma = rng.values(3), beta = rng.values(3), mean = rng.values(3),
       var = rng.values(3, 0.5f, 2.f);
  m.initFloat("gamma", {3}, gamma);
  m.initFloat("beta", {3}, beta);
  m.initFloat("mean", {3}, mean);
  m.initFloat("var", {3}, var);
  m.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"y"});
  m.output("y");
  auto x = rng.values(24);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ref(24);
  for (size_t k = 0; k < 24; ++k) {
    const size_t ch = (k / 4) % 3;
    ref[k] = (x[k] - mean[ch]) / std::sqrt(var[ch] + 1e-5f) * gamma[ch] + beta[ch];
  }
  expectNear(out["y"].v, ref, 1e-5f, rng.seed);
}

TEST(OnnxOps, ClassifierHead) {
  // GlobalAveragePool -> Flatten -> Gemm(transB) -> Softmax, as PyTorch exports it.
  Rng rng;
  Model m(11);
  m.input("x", {2, 5, 3, 3});
  auto w = rng.values(4 * 5), b = rng.values(4);
  m.initFloat("w", {4, 5}, w);
  m.initFloat("b", {4}, b);
  m.node("GlobalAveragePool", {"x"}, {"g"});
  m.node("Flatten", {"g"}, {"f"});
  auto& gemm = m.node("Gemm", {"f", "w", "b"}, {"z"});
  attrInt(gemm, "transB", 1);
  attrFloat(gemm, "alpha", 0.5f);
  auto& sm = m.node("Softmax", {"z"}, {"y"});
  attrInt(sm, "axis", 1);
  m.output("y");
  auto x = rng.values(2 * 5 * 9);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ref;
  for (int n = 0; n < 2; ++n) {
    float z[4], mx = -1e30f, sum = 0;
    for (int o = 0; o < 4; ++o) {
      double acc = 0;
      for (int c = 0; c < 5; ++c) {
        double g = 0;
        for (int k = 0; k < 9; ++k) g += x[size_t((n * 5 + c) * 9 + k)];
        acc += g / 9 * w[size_t(o * 5 + c)];
      }
      z[o] = float(0.5 * acc + b[size_t(o)]);
      mx = std::max(mx, z[o]);
    }
    for (float& v : z) sum += (v = std::exp(v - mx));
    for (float v : z) ref.push_back(v / sum);
  }
  EXPECT_EQ(out["y"].dims, makeDims({2, 4}));
  expectNear(out["y"].v, ref, 1e-5f, rng.seed);
}

TEST(OnnxOps, BroadcastingElementwise) {
  Rng rng;
  const char* ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  for (const char* op : ops) {
    SCOPED_TRACE(op);
    Model m(13);
    m.input("a", {2, 3, 4});
    auto bv = rng.values(3, 0.5f, 2.f);
    m.initFloat("b", {3, 1}, bv);
    m.node(op, {"a", "b"}, {"y"});
    m.output("y");
    auto a = rng.values(24);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"a", a}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> ref(24);
    for (size_t k = 0; k < 24; ++k) {
      const float x = a[k], y = bv[(k / 4) % 3];
      const std::string o = op;
      ref[k] = o == "Add"   ? x + y
               : o == "Sub" ? x - y
               : o == "Mul" ? x * y
               : o == "Div" ? x / y
               : o == "Max" ? std::max(x, y)
                            : std::min(x, y);
    }
    expectNear(out["y"].v, ref, 1e-6f, rng.seed);
  }
}

TEST(OnnxOps, VariadicSumAndMean) {
  Rng rng;
  for (const char* op : {"Sum", "Mean", "Max"}) {
    SCOPED_TRACE(op);
    Model m(13);
    m.input("a", {3, 4});
    m.input("b", {4});
    m.input("c", {3, 4});
    m.node(op, {"a", "b", "c"}, {"y"});
    m.output("y");
    auto a = rng.values(12), b = rng.values(4), c = rng.values(12);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"a", a}, {"b", b}, {"c", c}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> ref(12);
    for (size_t k = 0; k < 12; ++k) {
      const float s3 = a[k] + b[k % 4] + c[k];
      ref[k] = op == std::string("Sum")    ? s3
               : op == std::string("Mean") ? s3 / 3
                                           : std::max({a[k], b[k % 4], c[k]});
    }
    expectNear(out["y"].v, ref, 1e-6f, rng.seed);
  }
}

TEST(OnnxOps, Activations) {
  Rng rng;
  struct Case {
    const char* op;
    int64_t opset;
    std::function<float(float)> f;
  };
  const Case cases[] = {
      {"Relu", 13, [](float x) { return std::max(x, 0.f); }},
      {"LeakyRelu", 13, [](float x) { return x < 0 ? 0.01f * x : x; }},
      {"Sigmoid", 13, [](float x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", 13, [](float x) { return std::tanh(x); }},
      {"HardSwish", 14, [](float x) { return x * std::min(std::max(x + 3, 0.f), 6.f) / 6; }},
      {"Clip", 9, [](float x) { return std::min(std::max(x, -0.25f), 0.5f); }},
      {"Clip", 13, [](float x) { return std::min(std::max(x, -0.25f), 0.5f); }},
      // Mish is opset 18; kiln imports an op whose form never changed whatever the model's opset.
      {"Mish", 17, [](float x) { return x * std::tanh(std::log1p(std::exp(x))); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " opset " + std::to_string(c.opset));
    Model m(c.opset);
    m.input("x", {2, 3, 5});
    std::vector<std::string> ins = {"x"};
    if (std::string(c.op) == "Clip" && c.opset >= 11) {
      m.initFloat("lo", {}, {-0.25f});
      m.initFloat("hi", {}, {0.5f});
      ins = {"x", "lo", "hi"};
    }
    auto& n = m.node(c.op, ins, {"y"});
    if (std::string(c.op) == "Clip" && c.opset < 11) {
      attrFloat(n, "min", -0.25f);
      attrFloat(n, "max", 0.5f);
    }
    m.output("y");
    auto x = rng.values(30, -4.f, 4.f);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> ref;
    for (float v : x) ref.push_back(c.f(v));
    expectNear(out["y"].v, ref, 1e-5f, rng.seed);
  }
}

TEST(OnnxOps, MatMulBatchedAndVector) {
  Rng rng;
  Model m(13);
  m.input("a", {2, 3, 4});
  auto b = rng.values(4 * 5), v = rng.values(5);
  m.initFloat("b", {4, 5}, b);
  m.initFloat("v", {5}, v);
  m.node("MatMul", {"a", "b"}, {"ab"});
  m.node("MatMul", {"ab", "v"}, {"y"});  // 1-D right operand: the last dim goes away
  m.output("ab");
  m.output("y");
  auto a = rng.values(24);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"a", a}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ab(30), y(6);
  for (int r = 0; r < 6; ++r) {
    double acc2 = 0;
    for (int j = 0; j < 5; ++j) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += double(a[size_t(r * 4 + k)]) * b[size_t(k * 5 + j)];
      ab[size_t(r * 5 + j)] = float(acc);
      acc2 += acc * v[size_t(j)];
    }
    y[size_t(r)] = float(acc2);
  }
  EXPECT_EQ(out["y"].dims, makeDims({2, 3}));
  expectNear(out["ab"].v, ab, 1e-5f, rng.seed);
  expectNear(out["y"].v, y, 1e-5f, rng.seed);
}

TEST(OnnxOps, PoolsWithPadsAndCeilMode) {
  Rng rng;
  for (const char* op : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(op);
    Model m(11);
    m.input("x", {1, 2, 5, 5});
    auto& p = m.node(op, {"x"}, {"y"});
    attrInts(p, "kernel_shape", {3, 3});
    attrInts(p, "strides", {2, 2});
    attrInts(p, "pads", {1, 1, 0, 0});
    attrInt(p, "ceil_mode", 1);
    m.output("y");
    auto x = rng.values(50);
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    // ceil((5 + 1 - 3) / 2) + 1 = 3, and the last window must start inside the padded input.
    ASSERT_EQ(out["y"].dims, makeDims({1, 2, 3, 3}));
    std::vector<float> ref;
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          float mx = -1e30f, sum = 0;
          int cnt = 0;
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
              const int yy = i * 2 + a - 1, xx = j * 2 + b - 1;
              if (yy < 0 || yy >= 5 || xx < 0 || xx >= 5) continue;
              const float v = x[size_t((c * 5 + yy) * 5 + xx)];
              mx = std::max(mx, v);
              sum += v;
              ++cnt;
            }
          ref.push_back(op == std::string("MaxPool") ? mx : sum / cnt);
        }
    expectNear(out["y"].v, ref, 1e-5f, rng.seed);
  }
}

TEST(OnnxOps, SoftmaxAxisSemanticsChangeAtOpset13) {
  Rng rng;
  auto x = rng.values(24, -3.f, 3.f);
  for (int64_t opset : {11, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Model m(opset);
    m.input("x", {2, 3, 4});
    auto& n = m.node("Softmax", {"x"}, {"y"});
    attrInt(n, "axis", 1);
    m.output("y");
    std::map<std::string, Tensor> out;
    Status s = run(m, {{"x", x}}, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> ref(24);
    if (opset < 13) {  // over the 12 trailing elements of each batch
      for (int b = 0; b < 2; ++b) {
        double sum = 0;
        for (int k = 0; k < 12; ++k) sum += std::exp(double(x[size_t(b * 12 + k)]));
        for (int k = 0; k < 12; ++k)
          ref[size_t(b * 12 + k)] = float(std::exp(double(x[size_t(b * 12 + k)])) / sum);
      }
    } else {  // over axis 1 only
      for (int b = 0; b < 2; ++b)
        for (int j = 0; j < 4; ++j) {
          double sum = 0;
          for (int c = 0; c < 3; ++c) sum += std::exp(double(x[size_t((b * 3 + c) * 4 + j)]));
          for (int c = 0; c < 3; ++c)
            ref[size_t((b * 3 + c) * 4 + j)] =
                float(std::exp(double(x[size_t((b * 3 + c) * 4 + j)])) / sum);
        }
    }
    expectNear(out["y"].v, ref, 1e-5f, rng.seed);
  }
}

TEST(OnnxOps, ReduceMeanAndSum) {
  Rng rng;
  Model m(13);
  m.input("x", {2, 3, 4});
  auto& mean = m.node("ReduceMean", {"x"}, {"mean"});
  attrInts(mean, "axes", {1});
  attrInt(mean, "keepdims", 0);
  m.initInts("axes", {-1});
  m.node("ReduceSum", {"x", "axes"}, {"sum"});
  m.output("mean");
  m.output("sum");
  auto x = rng.values(24);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> rm(8), rs(6);
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c)
      for (int j = 0; j < 4; ++j) {
        rm[size_t(b * 4 + j)] += x[size_t((b * 3 + c) * 4 + j)] / 3;
        rs[size_t(b * 3 + c)] += x[size_t((b * 3 + c) * 4 + j)];
      }
  EXPECT_EQ(out["mean"].dims, makeDims({2, 4}));
  EXPECT_EQ(out["sum"].dims, makeDims({2, 3, 1}));
  expectNear(out["mean"].v, rm, 1e-5f, rng.seed);
  expectNear(out["sum"].v, rs, 1e-5f, rng.seed);
}

TEST(OnnxOps, TransposeConcatReshape) {
  Rng rng;
  Model m(13);
  m.input("a", {2, 3, 4});
  m.input("b", {2, 4, 1});
  auto& t = m.node("Transpose", {"a"}, {"at"});
  attrInts(t, "perm", {0, 2, 1});
  auto& c = m.node("Concat", {"at", "b"}, {"cat"});
  attrInt(c, "axis", -1);
  m.initInts("shape", {0, -1});
  m.node("Reshape", {"cat", "shape"}, {"y"});
  m.output("y");
  auto a = rng.values(24), b = rng.values(8);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"a", a}, {"b", b}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ref;
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 3; ++i) ref.push_back(a[size_t((n * 3 + i) * 4 + j)]);
      ref.push_back(b[size_t(n * 4 + j)]);
    }
  EXPECT_EQ(out["y"].dims, makeDims({2, 16}));
  expectNear(out["y"].v, ref, 0.f, rng.seed);
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

TEST(OnnxOps, Conv1dRunsAsTwoDimensional) {
  Rng rng;
  Model m(13);
  m.input("x", {1, 2, 9});
  auto w = rng.values(3 * 2 * 3);
  m.initFloat("w", {3, 2, 3}, w);
  auto& c = m.node("Conv", {"x", "w"}, {"y"});
  attrInts(c, "strides", {2});
  attrInts(c, "pads", {1, 0});
  m.output("y");
  auto x = rng.values(18);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  // (9 + 1 - 3) / 2 + 1 = 4
  ASSERT_EQ(out["y"].dims, makeDims({1, 3, 4}));
  std::vector<float> ref;
  for (int o = 0; o < 3; ++o)
    for (int j = 0; j < 4; ++j) {
      double acc = 0;
      for (int ci = 0; ci < 2; ++ci)
        for (int k = 0; k < 3; ++k) {
          const int xx = j * 2 + k - 1;
          if (xx >= 0 && xx < 9)
            acc += double(x[size_t(ci * 9 + xx)]) * w[size_t((o * 2 + ci) * 3 + k)];
        }
      ref.push_back(float(acc));
    }
  expectNear(out["y"].v, ref, 1e-5f, rng.seed);
}

TEST(OnnxOps, LegacyBroadcastAndIntegerExponent) {
  // Opset 6 Add with broadcast=1, axis=1 aligns B [3] with A's axis 1; Pow's int64 exponent
  // constant is converted to the base's type.
  Rng rng;
  Model m(6);
  m.input("a", {2, 3, 4});
  auto b = rng.values(3);
  m.initFloat("b", {3}, b);
  auto& add = m.node("Add", {"a", "b"}, {"s"});
  attrInt(add, "broadcast", 1);
  attrInt(add, "axis", 1);
  m.output("s");
  auto a = rng.values(24);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"a", a}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> ref;
  for (size_t k = 0; k < 24; ++k) ref.push_back(a[k] + b[(k / 4) % 3]);
  expectNear(out["s"].v, ref, 1e-6f, rng.seed);

  Model p(13);
  p.input("x", {5});
  p.initInts("two", {2}, true);
  p.node("Pow", {"x", "two"}, {"y"});
  p.output("y");
  auto x = rng.values(5);
  s = run(p, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> sq;
  for (float v : x) sq.push_back(v * v);
  expectNear(out["y"].v, sq, 1e-6f, rng.seed);
}

TEST(OnnxOps, WherePadResizeTransposedConv) {
  Rng rng;
  Model m(13);
  m.input("x", {1, 1, 2, 3});
  m.node("Greater", {"x", "zero"}, {"pos"});
  m.initFloat("zero", {}, {0.f});
  m.initFloat("neg", {}, {-1.f});
  // Where(x > 0, x, -1)
  m.graph().mutable_node(0)->set_input(1, "zero");
  m.node("Where", {"pos", "x", "neg"}, {"w"});
  m.initInts("pads", {0, 0, 1, 0, 0, 0, 0, 1});
  auto& pad = m.node("Pad", {"w", "pads"}, {"p"});  // [1, 1, 3, 4], zeros on top and right
  attrString(pad, "mode", "constant");
  m.initFloat("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  auto& rs = m.node("Resize", {"p", "", "scales"}, {"r"});  // [1, 1, 6, 8]
  attrString(rs, "mode", "nearest");
  attrString(rs, "coordinate_transformation_mode", "asymmetric");
  attrString(rs, "nearest_mode", "floor");
  m.initFloat("wt", {1, 1, 1, 1}, {2.f});
  m.node("ConvTranspose", {"p", "wt"}, {"ct"});  // 1x1 kernel: doubles
  m.output("r");
  m.output("ct");
  auto x = rng.values(6);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"x", x}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> p(12, 0.f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      p[size_t((i + 1) * 4 + j)] = x[size_t(i * 3 + j)] > 0 ? x[size_t(i * 3 + j)] : -1.f;
  std::vector<float> r, ct;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 8; ++j) r.push_back(p[size_t((i / 2) * 4 + j / 2)]);
  for (float v : p) ct.push_back(2 * v);
  ASSERT_EQ(out["r"].dims, makeDims({1, 1, 6, 8}));
  expectNear(out["r"].v, r, 0.f, rng.seed);
  expectNear(out["ct"].v, ct, 1e-6f, rng.seed);
}

}  // namespace
}  // namespace kiln::testing
