// The bundled demo detector (models/demo_detector.onnx) goes through the ONNX parser with its
// CropAndResize node resolved to kiln's plugin, builds and runs, and behaves like a per-box
// classifier: one softmax row per box, each row depending on its own box only.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/kiln.h"
#include "kiln/onnx_parser.h"
#include "kiln/plugins.h"

namespace kiln {
namespace {

constexpr int kBoxes = 6;
constexpr int kClasses = 5;

class DemoModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(PluginRegistry::global()
                    .registerLibrary(*getBuiltinPluginLibrary(), getBuiltinPluginLibraryPath())
                    .isOk());
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  void build() {
    network_ = createNetwork();
    const Status s = parseOnnxFile(KILN_DEMO_ONNX, *network_);
    ASSERT_TRUE(s.isOk()) << s.toString();
    BuilderConfig config;
    config.allowHalf = false;
    config.warmupRuns = 0;
    config.timingRuns = 1;
    std::vector<uint8_t> plan;
    const Status b = createBuilder()->buildSerializedNetwork(*network_, config, plan);
    ASSERT_TRUE(b.isOk()) << b.toString();
    const Status d = createRuntime()->deserializeEngine(plan.data(), plan.size(), engine_);
    ASSERT_TRUE(d.isOk()) << d.toString();
  }

  std::vector<float> run(std::vector<float> image, std::vector<float> boxes,
                         std::vector<int32_t> indices) {
    std::unique_ptr<IExecutionContext> context;
    EXPECT_TRUE(engine_->createExecutionContext(context).isOk());
    std::vector<float> scores(kBoxes * kClasses, -1.f);
    EXPECT_TRUE(context->setTensorAddress("image", image.data()).isOk());
    EXPECT_TRUE(context->setTensorAddress("boxes", boxes.data()).isOk());
    EXPECT_TRUE(context->setTensorAddress("box_indices", indices.data()).isOk());
    EXPECT_TRUE(context->setTensorAddress("class_scores", scores.data()).isOk());
    const Status s = context->enqueue(nullptr);
    EXPECT_TRUE(s.isOk()) << s.toString();
    return scores;
  }

  std::vector<float> randomBoxes() {
    std::uniform_real_distribution<float> lo(0.05f, 0.45f), len(0.2f, 0.5f);
    std::vector<float> boxes;
    for (int b = 0; b < kBoxes; ++b) {
      const float y1 = lo(rng_), x1 = lo(rng_);
      boxes.insert(boxes.end(), {y1, x1, y1 + len(rng_), x1 + len(rng_)});
    }
    return boxes;
  }

  unsigned seed_ = 0;
  std::mt19937 rng_;
  std::unique_ptr<INetworkDefinition> network_;
  std::unique_ptr<IEngine> engine_;
};

TEST_F(DemoModelTest, ParsesWithCropAndResizePlugin) {
  ASSERT_NO_FATAL_FAILURE(build());
  int plugins = 0;
  for (int32_t i = 0; i < network_->getNbLayers(); ++i) {
    plugins += network_->getLayer(i)->getType() == LayerType::kPLUGIN;
  }
  EXPECT_EQ(plugins, 1);
  const PluginTensorDesc out = engine_->getTensorDesc("class_scores");
  EXPECT_EQ(out.dims, makeDims({kBoxes, kClasses}));
  EXPECT_EQ(engine_->getTensorDesc("box_indices").type, DataType::kINT32);
}

TEST_F(DemoModelTest, ScoresAreOneSoftmaxRowPerBox) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  ASSERT_NO_FATAL_FAILURE(build());
  std::uniform_real_distribution<float> pixel(-1.f, 1.f);
  std::vector<float> image(3 * 64 * 64);
  for (float& v : image) v = pixel(rng_);
  std::vector<float> boxes = randomBoxes();
  const std::vector<int32_t> indices(kBoxes, 0);
  const std::vector<float> scores = run(image, boxes, indices);
  for (int b = 0; b < kBoxes; ++b) {
    double sum = 0;
    for (int c = 0; c < kClasses; ++c) {
      const float p = scores[b * kClasses + c];
      EXPECT_GT(p, 0.f);
      EXPECT_LT(p, 1.f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "box " << b;
  }
  // Moving one box changes its row and no other.
  const int moved = std::uniform_int_distribution<int>(0, kBoxes - 1)(rng_);
  for (int k = 0; k < 4; ++k) boxes[moved * 4 + k] = 1.0f - boxes[moved * 4 + k];
  const std::vector<float> again = run(image, boxes, indices);
  for (int b = 0; b < kBoxes; ++b) {
    const bool same =
        std::memcmp(&scores[b * kClasses], &again[b * kClasses], kClasses * sizeof(float)) == 0;
    EXPECT_EQ(same, b != moved) << "box " << b << " (moved box " << moved << ")";
  }
}

}  // namespace
}  // namespace kiln
