// Plugin fallback: CropAndResize in an ONNX model, attributes passed with their types kept.
#include <cstring>

#include "kiln/plugins.h"
#include "kiln/registry.h"
#include "onnx/onnx_test_util.h"

namespace kiln::testing {
namespace {

void registerBuiltins() {
  static const bool done = [] {
    Status s = PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                        getBuiltinPluginLibraryPath());
    EXPECT_TRUE(s.isOk()) << s.toString();
    return true;
  }();
  (void)done;
}

// Bilinear crop of DESIGN.md §5 for one channel plane.
float cropSample(const float* plane, int64_t h, int64_t w, const float* box, int64_t ch, int64_t cw,
                 int64_t y, int64_t x) {
  const float y1 = box[0], x1 = box[1], y2 = box[2], x2 = box[3];
  const float sy = (y2 - y1) * float(h - 1) / float(ch - 1);
  const float sx = (x2 - x1) * float(w - 1) / float(cw - 1);
  const float iy = y1 * float(h - 1) + float(y) * sy, ix = x1 * float(w - 1) + float(x) * sx;
  const int64_t t = int64_t(std::floor(iy)), b = int64_t(std::ceil(iy));
  const int64_t l = int64_t(std::floor(ix)), r = int64_t(std::ceil(ix));
  const float fy = iy - float(t), fx = ix - float(l);
  const float top = plane[t * w + l] + (plane[t * w + r] - plane[t * w + l]) * fx;
  const float bot = plane[b * w + l] + (plane[b * w + r] - plane[b * w + l]) * fx;
  return top + (bot - top) * fy;
}

TEST(OnnxPlugin, CropAndResizeRunsThroughTheRegistry) {
  registerBuiltins();
  Rng rng;
  Model m(13);
  m.input("fm", {1, 2, 6, 5});
  m.input("rois", {1, 3, 4});
  auto& n = m.node("CropAndResize", {"fm", "rois"}, {"y"}, "crop");
  attrInt(n, "crop_height", 3);
  attrInt(n, "crop_width", 4);
  attrString(n, "plugin_version", "1");
  m.output("y");
  auto fm = rng.values(60);
  auto rois = rng.values(12, 0.05f, 0.95f);
  std::map<std::string, Tensor> out;
  Status s = run(m, {{"fm", fm}, {"rois", rois}}, out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(out["y"].dims, makeDims({1, 3, 2, 3, 4}));
  std::vector<float> ref;
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x)
          ref.push_back(cropSample(&fm[size_t(c * 30)], 6, 5, &rois[size_t(b * 4)], 3, 4, y, x));
  expectNear(out["y"].v, ref, 1e-5f, rng.seed);
}

// Records the fields it is given, then refuses to make a plugin.
class ProbeCreator : public IPluginCreator {
 public:
  const char* getPluginName() const noexcept override { return "FieldProbe"; }
  const char* getPluginVersion() const noexcept override { return "3"; }
  const PluginFieldCollection* getFieldNames() noexcept override { return &none_; }
  IPlugin* createPlugin(const char*, const PluginFieldCollection* fields) noexcept override {
    for (int32_t i = 0; i < fields->nbFields; ++i) {
      const PluginField& f = fields->fields[i];
      seen.push_back({f.name, f.type, f.length});
      if (i == 0 && f.type == PluginFieldType::kINT64 && f.length >= 1)
        std::memcpy(&firstInt, f.data, 8);
    }
    return nullptr;
  }
  IPlugin* deserializePlugin(const char*, const void*, size_t) noexcept override { return nullptr; }
  const char* getLastError() const noexcept override { return "probe refuses"; }
  struct Seen {
    std::string name;
    PluginFieldType type;
    int32_t length;
  };
  std::vector<Seen> seen;
  int64_t firstInt = 0;

 private:
  PluginFieldCollection none_;
};

TEST(OnnxPlugin, AttributesKeepTheirTypes) {
  static ProbeCreator probe;
  static const bool registered = PluginRegistry::global().registerCreator(probe, "tests").isOk();
  ASSERT_TRUE(registered);
  probe.seen.clear();
  Model m(13);
  m.input("x", {2, 3});
  auto& n = m.node("FieldProbe", {"x"}, {"y"}, "probe");
  attrInt(n, "big", int64_t(1) << 40);
  attrInts(n, "sizes", {1, 2, 3});
  attrFloat(n, "scale", 0.5f);
  attrString(n, "method", "nearest");
  attrString(n, "plugin_version", "3");
  attrString(n, "plugin_namespace", "tests");
  m.output("y");
  auto net = createNetwork();
  const std::string b = m.bytes();
  Status s = parseOnnxBytes(b.data(), b.size(), "probe", *net);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("node 0 'probe' (FieldProbe)"), std::string::npos) << s.message();
  ASSERT_EQ(probe.seen.size(), 4u);
  EXPECT_EQ(probe.seen[0].name, "big");
  EXPECT_EQ(probe.seen[0].type, PluginFieldType::kINT64);
  EXPECT_EQ(probe.firstInt, int64_t(1) << 40);
  EXPECT_EQ(probe.seen[1].type, PluginFieldType::kINT64);
  EXPECT_EQ(probe.seen[1].length, 3);
  EXPECT_EQ(probe.seen[2].type, PluginFieldType::kFLOAT32);
  EXPECT_EQ(probe.seen[3].type, PluginFieldType::kSTRING);
  EXPECT_EQ(probe.seen[3].length, 7);

  // The wrong version is not found, and says which one it looked for.
  n.mutable_attribute(4)->set_s("9");
  const std::string b2 = m.bytes();
  auto net2 = createNetwork();
  s = parseOnnxBytes(b2.data(), b2.size(), "probe", *net2);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("version '9'"), std::string::npos) << s.message();
}

TEST(OnnxPlugin, StringListAttributeIsRefused) {
  registerBuiltins();
  Model m(13);
  m.input("fm", {1, 2, 6, 5});
  m.input("rois", {1, 3, 4});
  auto& n = m.node("CropAndResize", {"fm", "rois"}, {"y"}, "crop");
  attrInt(n, "crop_height", 3);
  attrInt(n, "crop_width", 4);
  auto& a = attr(n, "names");
  a.set_type(onnx::AttributeProto::STRINGS);
  a.add_strings("a");
  m.output("y");
  auto net = createNetwork();
  const std::string b = m.bytes();
  Status s = parseOnnxBytes(b.data(), b.size(), "crop", *net);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("node 0 'crop' (CropAndResize)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'names'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// A plugin node in a model with a dynamic batch (issue 10): parsed and built with one profile,
// the plan runs batches it was not built at, CropAndResize in its dynamic form.
TEST(OnnxPlugin, CropAndResizeFollowsADynamicBatch) {
  registerBuiltins();
  Rng rng;
  Model m(13);
  m.input("fm", {1, 2, 6, 5});
  m.input("rois", {1, 3, 4});
  symbolic(m, 0, 0, "N");
  symbolic(m, 1, 0, "N");
  m.node("Relu", {"fm"}, {"r"}, "relu");
  auto& n = m.node("CropAndResize", {"r", "rois"}, {"y"}, "crop");
  attrInt(n, "crop_height", 3);
  attrInt(n, "crop_width", 4);
  attrString(n, "plugin_version", "1");
  m.output("y");
  OptimizationProfile p;
  for (auto [which, b] : {std::pair{OptProfileSelector::kMIN, 1},
                          {OptProfileSelector::kOPT, 2},
                          {OptProfileSelector::kMAX, 3}}) {
    p.setDimensions("fm", which, makeDims({b, 2, 6, 5}));
    p.setDimensions("rois", which, makeDims({b, 3, 4}));
  }
  OnnxParserOptions options;
  options.profiles = {p};
  std::unique_ptr<INetworkDefinition> net;
  Status s = parse(m, net, options);
  ASSERT_TRUE(s.isOk()) << s.toString();
  BuilderConfig config;
  config.profiles = {p};
  config.allowHalf = false;
  std::vector<uint8_t> plan;
  s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  for (int64_t batch : {3, 1, 2}) {
    auto fm = rng.values(static_cast<size_t>(batch * 60));
    auto rois = rng.values(static_cast<size_t>(batch * 12), 0.05f, 0.95f);
    std::vector<float> y(static_cast<size_t>(batch * 3 * 2 * 3 * 4), -7.f);
    ASSERT_TRUE(ctx->setInputShape("fm", makeDims({batch, 2, 6, 5})).isOk());
    ASSERT_TRUE(ctx->setInputShape("rois", makeDims({batch, 3, 4})).isOk());
    EXPECT_EQ(ctx->getTensorShape("y"), makeDims({batch, 3, 2, 3, 4}));
    ASSERT_TRUE(ctx->setTensorAddress("fm", fm.data()).isOk());
    ASSERT_TRUE(ctx->setTensorAddress("rois", rois.data()).isOk());
    ASSERT_TRUE(ctx->setTensorAddress("y", y.data()).isOk());
    s = ctx->enqueue(nullptr);
    ASSERT_TRUE(s.isOk()) << s.toString();
    std::vector<float> relu(fm.size()), ref;
    for (size_t i = 0; i < fm.size(); ++i) relu[i] = std::max(fm[i], 0.f);
    for (int64_t i = 0; i < batch; ++i)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 2; ++c)
          for (int yy = 0; yy < 3; ++yy)
            for (int x = 0; x < 4; ++x)
              ref.push_back(cropSample(&relu[size_t(i * 60 + c * 30)], 6, 5,
                                       &rois[size_t((i * 3 + b) * 4)], 3, 4, yy, x));
    expectNear(y, ref, 1e-5f, rng.seed);
  }
}

}  // namespace
}  // namespace kiln::testing
