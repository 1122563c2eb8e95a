// CropAndResize in its dynamic form (DESIGN.md §7, issue 10): one plan built with an optimization
// profile over the batch and the number of boxes serves every shape inside it. Each run, on fresh
// random data, must equal a static plan built for that shape, and the lifecycle trace of the whole
// test (configure per profile, onShapeChange per shape change) must hold guarantees 1-9.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

#include "kiln/builder.h"
#include "kiln/kiln.h"
#include "kiln/plugins.h"
#include "plugin/trace_checker.h"

namespace kiln::testing {
namespace {

constexpr int64_t kC = 3, kH = 9, kW = 11;
constexpr int32_t kCropH = 4, kCropW = 5;

// The two forms: three inputs (image [N,C,H,W], boxes [K,4], box_indices [K]) and two
// (feature_maps [N,C,H,W], rois [N,B,4]). `n`, `k`: -1 for a dynamic axis.
struct Form {
  bool threeInputs;
};

std::unique_ptr<INetworkDefinition> makeNetwork(const Form& form, int64_t n, int64_t k) {
  auto net = createNetwork();
  ITensor* image = net->addInput("image", DataType::kFLOAT, makeDims({n, kC, kH, kW}));
  std::vector<ITensor*> in = {image};
  if (form.threeInputs) {
    ITensor* boxes = net->addInput("boxes", DataType::kFLOAT, makeDims({k, 4}));
    ITensor* indices = net->addInput("box_indices", DataType::kINT32, makeDims({k}));
    if (k < 0) {
      EXPECT_TRUE(boxes->setDimensionName(0, "K"));
      EXPECT_TRUE(indices->setDimensionName(0, "K"));
    }
    in.push_back(boxes);
    in.push_back(indices);
  } else {
    ITensor* rois = net->addInput("boxes", DataType::kFLOAT, makeDims({n, k, 4}));
    if (n < 0) {
      EXPECT_TRUE(image->setDimensionName(0, "N"));
      EXPECT_TRUE(rois->setDimensionName(0, "N"));
    }
    in.push_back(rois);
  }
  const int32_t h = kCropH, w = kCropW;
  std::vector<PluginField> fields = {{"crop_height", &h, PluginFieldType::kINT32, 1},
                                     {"crop_width", &w, PluginFieldType::kINT32, 1}};
  PluginSpec spec;
  spec.name = "CropAndResize";
  spec.version = "1";
  spec.fields = PluginFieldCollection{static_cast<int32_t>(fields.size()), fields.data()};
  ILayer* crop = net->addPlugin(in.data(), static_cast<int32_t>(in.size()), spec);
  EXPECT_NE(crop, nullptr) << net->getLastError().toString();
  if (!crop) return net;
  crop->setName("crop0");
  crop->getOutput(0)->setName("crops");
  EXPECT_TRUE(net->markOutput(*crop->getOutput(0)).isOk());
  return net;
}

struct Inputs {
  std::vector<float> image, boxes;
  std::vector<int32_t> indices;
};

// Boxes inside the image, so that every crop samples it (a box wholly outside would crop only
// the extrapolation value, 0, and hide an untouched output).
Inputs randomInputs(const Form& form, int64_t n, int64_t k, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f), coord(0.f, 1.f);
  Inputs x;
  x.image.resize(static_cast<size_t>(n * kC * kH * kW));
  for (float& v : x.image) v = value(rng);
  const int64_t boxCount = form.threeInputs ? k : n * k;
  x.boxes.resize(static_cast<size_t>(boxCount * 4));
  for (float& v : x.boxes) v = coord(rng);
  if (form.threeInputs) {
    std::uniform_int_distribution<int32_t> index(0, static_cast<int32_t>(n - 1));
    x.indices.resize(static_cast<size_t>(k));
    for (int32_t& i : x.indices) i = index(rng);
  }
  return x;
}

Status run(IExecutionContext& ctx, const Form& form, int64_t n, int64_t k, Inputs& x,
           std::vector<float>& out) {
  const int64_t boxCount = form.threeInputs ? k : n * k;
  out.assign(static_cast<size_t>(boxCount * kC * kCropH * kCropW), -7.f);
  KILN_RETURN_IF_ERROR(ctx.setTensorAddress("image", x.image.data()));
  KILN_RETURN_IF_ERROR(ctx.setTensorAddress("boxes", x.boxes.data()));
  if (form.threeInputs) KILN_RETURN_IF_ERROR(ctx.setTensorAddress("box_indices", x.indices.data()));
  KILN_RETURN_IF_ERROR(ctx.setTensorAddress("crops", out.data()));
  return ctx.enqueue(nullptr);
}

class CropAndResizeDynamic : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    // Registered once per process (a second registration of the same library is refused).
    (void)PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                   getBuiltinPluginLibraryPath());
    tracePath_ =
        ::testing::TempDir() + "kiln_crop_dynamic_" + std::to_string(GetParam() ? 3 : 2) + ".jsonl";
    ASSERT_TRUE(setTracePath(tracePath_).isOk());
  }
  void TearDown() override {
    flushTrace();
    ASSERT_TRUE(setTracePath("").isOk());
    std::vector<TraceViolation> violations;
    ASSERT_TRUE(checkTraceFile(tracePath_, violations).isOk());
    for (const TraceViolation& v : violations) ADD_FAILURE() << formatTraceViolation(v);
    std::remove(tracePath_.c_str());
  }
  std::string tracePath_;
};

TEST_P(CropAndResizeDynamic, OneProfilePlanMatchesStaticPlansAtEveryShape) {
  const Form form{GetParam()};
  auto net = makeNetwork(form, -1, -1);
  // FP32 plugin tensors in both plans, so that they compute the same thing (the builder may pick
  // FP16 by timing otherwise).
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.allowHalf = false;
  OptimizationProfile profile;
  auto set = [&](const char* name, std::initializer_list<int64_t> lo,
                 std::initializer_list<int64_t> mid, std::initializer_list<int64_t> hi) {
    ASSERT_TRUE(profile.setDimensions(name, OptProfileSelector::kMIN, makeDims(lo)));
    ASSERT_TRUE(profile.setDimensions(name, OptProfileSelector::kOPT, makeDims(mid)));
    ASSERT_TRUE(profile.setDimensions(name, OptProfileSelector::kMAX, makeDims(hi)));
  };
  set("image", {1, kC, kH, kW}, {2, kC, kH, kW}, {3, kC, kH, kW});
  if (form.threeInputs) {
    set("boxes", {1, 4}, {4, 4}, {6, 4});
    set("box_indices", {1}, {4}, {6});
  } else {
    set("boxes", {1, 1, 4}, {2, 4, 4}, {3, 6, 4});
  }
  config.profiles.push_back(profile);
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  s = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());

  std::mt19937 rng(std::random_device{}());
  // min, opt, max, then shapes between (one repeated: no new onShapeChange for it).
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {2, 4}, {3, 6}, {3, 2},
                                                           {3, 2}, {2, 5}, {1, 3}};
  for (const auto& [n, k] : shapes) {
    SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k));
    ASSERT_TRUE(ctx->setInputShape("image", makeDims({n, kC, kH, kW})).isOk());
    if (form.threeInputs) {
      ASSERT_TRUE(ctx->setInputShape("boxes", makeDims({k, 4})).isOk());
      ASSERT_TRUE(ctx->setInputShape("box_indices", makeDims({k})).isOk());
    } else {
      ASSERT_TRUE(ctx->setInputShape("boxes", makeDims({n, k, 4})).isOk());
    }
    const Dims crops = ctx->getTensorShape("crops");
    ASSERT_EQ(crops, form.threeInputs ? makeDims({k, kC, kCropH, kCropW})
                                      : makeDims({n, k, kC, kCropH, kCropW}));
    Inputs x = randomInputs(form, n, k, rng);
    std::vector<float> got, want;
    s = run(*ctx, form, n, k, x, got);
    ASSERT_TRUE(s.isOk()) << s.toString();

    auto fixed = makeNetwork(form, n, k);
    std::vector<uint8_t> staticPlan;
    BuilderConfig staticConfig;
    staticConfig.timingRuns = 1;
    staticConfig.warmupRuns = 0;
    staticConfig.allowHalf = false;
    ASSERT_TRUE(createBuilder()->buildSerializedNetwork(*fixed, staticConfig, staticPlan).isOk());
    std::unique_ptr<IEngine> staticEngine;
    ASSERT_TRUE(createRuntime()
                    ->deserializeEngine(staticPlan.data(), staticPlan.size(), staticEngine)
                    .isOk());
    std::unique_ptr<IExecutionContext> staticCtx;
    ASSERT_TRUE(staticEngine->createExecutionContext(staticCtx).isOk());
    ASSERT_TRUE(run(*staticCtx, form, n, k, x, want).isOk());
    ASSERT_EQ(got.size(), want.size());
    size_t nonzero = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::fabs(want[i]))) << "element " << i;
      nonzero += want[i] != 0.f;
    }
    // Real crops: every element written (the output starts at -7) and not all extrapolated zeros.
    EXPECT_EQ(std::count(got.begin(), got.end(), -7.f), 0);
    EXPECT_GT(nonzero, 0u);
  }
  // Out of the profile: refused, naming the range.
  s = ctx->setInputShape("image", makeDims({4, kC, kH, kW}));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("[1, 3]"), std::string::npos) << s.message();
}

// Two profiles: every build object is configured once per profile (in profile order), and a
// context on profile 1 runs shapes only that profile accepts.
TEST(CropAndResizeDynamicProfiles, EachProfileConfiguresThePluginAndServesItsShapes) {
  (void)PluginRegistry::global().registerLibrary(*getBuiltinPluginLibrary(),
                                                 getBuiltinPluginLibraryPath());
  const std::string trace = ::testing::TempDir() + "kiln_crop_two_profiles.jsonl";
  ASSERT_TRUE(setTracePath(trace).isOk());
  const Form form{true};
  auto net = makeNetwork(form, -1, -1);
  BuilderConfig config;
  config.timingRuns = 1;
  config.warmupRuns = 0;
  config.allowHalf = false;
  for (int64_t base : {1, 5}) {  // boxes 1..4 and 5..9
    OptimizationProfile p;
    for (auto [which, n, k] : {std::tuple{OptProfileSelector::kMIN, int64_t{1}, base},
                               std::tuple{OptProfileSelector::kOPT, int64_t{2}, base + 2},
                               std::tuple{OptProfileSelector::kMAX, int64_t{2}, base + 4}}) {
      p.setDimensions("image", which, makeDims({n, kC, kH, kW}));
      p.setDimensions("boxes", which, makeDims({k, 4}));
      p.setDimensions("box_indices", which, makeDims({k}));
    }
    config.profiles.push_back(p);
  }
  std::vector<uint8_t> plan;
  Status s = createBuilder()->buildSerializedNetwork(*net, config, plan);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  ASSERT_TRUE(ctx->setOptimizationProfile(1).isOk());
  std::mt19937 rng(std::random_device{}());
  for (int64_t k : {5, 9, 7}) {
    ASSERT_TRUE(ctx->setInputShape("image", makeDims({2, kC, kH, kW})).isOk());
    ASSERT_TRUE(ctx->setInputShape("boxes", makeDims({k, 4})).isOk());
    ASSERT_TRUE(ctx->setInputShape("box_indices", makeDims({k})).isOk());
    Inputs x = randomInputs(form, 2, k, rng);
    std::vector<float> out;
    s = run(*ctx, form, 2, k, x, out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_EQ(std::count(out.begin(), out.end(), -7.f), 0) << "every crop written";
  }
  ctx.reset();
  engine.reset();
  net.reset();  // the definition object goes with the network
  flushTrace();
  ASSERT_TRUE(setTracePath("").isOk());
  std::vector<std::string> lines;
  ASSERT_TRUE(readTraceFile(trace, lines).isOk());
  // The chosen build object and every timed one: configurePlugin twice per clone made in build.
  int clones = 0, configures = 0, changes = 0;
  for (const std::string& line : lines) {
    const bool build = line.find("\"phase\":\"build\"") != std::string::npos;
    clones += build && line.find("\"call\":\"clone\"") != std::string::npos;
    configures += line.find("\"call\":\"configurePlugin\"") != std::string::npos;
    changes += line.find("\"call\":\"onShapeChange\"") != std::string::npos;
  }
  EXPECT_GT(clones, 0);
  EXPECT_EQ(configures, 2 * clones);
  EXPECT_EQ(changes, 3);
  std::vector<TraceViolation> violations;
  ASSERT_TRUE(checkTraceFile(trace, violations).isOk());
  for (const TraceViolation& v : violations) ADD_FAILURE() << formatTraceViolation(v);
  std::remove(trace.c_str());
}

INSTANTIATE_TEST_SUITE_P(Forms, CropAndResizeDynamic, ::testing::Values(true, false),
                         [](const auto& info) {
                           return std::string(info.param ? "ThreeInputs" : "TwoInputs");
                         });

}  // namespace
}  // namespace kiln::testing
