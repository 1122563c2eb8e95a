// IExecutionContext::setProfiler: a profiled enqueue reports every layer once, in execution order,
// with times laid end to end; without a profiler nothing is reported. Also the device events the
// profiler is built on, and IEngine::getMemory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../tools/demo_network.h"
#include "kiln/kiln.h"
#include "runtime/demo_plan_test_util.h"

namespace kiln::testing {
namespace {

struct Recorder final : IProfiler {
  struct Entry {
    int32_t index;
    std::string name, type, tactic;
    double startMs, durationMs, hostMs;
  };
  std::vector<Entry> entries;
  void reportLayerTime(const LayerTime& t) override {
    entries.push_back(
        {t.index, t.layerName, t.layerType, t.tactic, t.startMs, t.durationMs, t.hostMs});
  }
};

struct Bound {
  std::unique_ptr<IEngine> engine;
  std::unique_ptr<IExecutionContext> context;
  std::vector<float> image = std::vector<float>(3 * demo::kImageSize * demo::kImageSize, 0.5f);
  std::vector<float> boxes = std::vector<float>(demo::kBoxes * 4, 0.25f);
  std::vector<int32_t> indices = std::vector<int32_t>(demo::kBoxes, 0);
  std::vector<float> scores = std::vector<float>(demo::kBoxes * demo::kClasses);
};

void bindDemo(Bound& b) {
  const std::vector<uint8_t>& plan = demoPlan();
  ASSERT_FALSE(plan.empty());
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), b.engine).isOk());
  ASSERT_TRUE(b.engine->createExecutionContext(b.context).isOk());
  ASSERT_TRUE(b.context->setTensorAddress("image", b.image.data()).isOk());
  ASSERT_TRUE(b.context->setTensorAddress("boxes", b.boxes.data()).isOk());
  ASSERT_TRUE(b.context->setTensorAddress("box_indices", b.indices.data()).isOk());
  ASSERT_TRUE(b.context->setTensorAddress("class_scores", b.scores.data()).isOk());
}

TEST(Profiler, ReportsEveryLayerInOrderLaidEndToEnd) {
  Bound b;
  ASSERT_NO_FATAL_FAILURE(bindDemo(b));
  Recorder recorder;
  EXPECT_EQ(b.context->getProfiler(), nullptr);
  ASSERT_TRUE(b.context->setProfiler(&recorder).isOk());
  EXPECT_EQ(b.context->getProfiler(), &recorder);
  ASSERT_TRUE(b.context->enqueue(nullptr).isOk());
  const size_t layers = recorder.entries.size();
  ASSERT_GT(layers, 3u);
  bool sawPlugin = false;
  double end = 0;
  for (size_t i = 0; i < layers; ++i) {
    const Recorder::Entry& e = recorder.entries[i];
    EXPECT_EQ(e.index, static_cast<int32_t>(i));
    EXPECT_FALSE(e.name.empty());
    EXPECT_FALSE(e.tactic.empty());
    EXPECT_GE(e.durationMs, 0);
    // The CPU backend runs a layer inside its launch, which lies between the layer's two events.
    EXPECT_GT(e.hostMs, 0) << e.name;
    EXPECT_LE(e.hostMs, e.durationMs + 1e-3) << e.name;
    // Consecutive events: each layer starts where the one before it ended.
    EXPECT_NEAR(e.startMs, end, 1e-6) << e.name;
    end = e.startMs + e.durationMs;
    if (e.type == "Plugin") {
      sawPlugin = true;
      EXPECT_EQ(e.tactic, "CropAndResize");
    }
  }
  EXPECT_TRUE(sawPlugin);
  EXPECT_EQ(recorder.entries[0].startMs, 0);

  // A second profiled enqueue reports as many again; after setProfiler(nullptr), none.
  ASSERT_TRUE(b.context->enqueue(nullptr).isOk());
  EXPECT_EQ(recorder.entries.size(), 2 * layers);
  ASSERT_TRUE(b.context->setProfiler(nullptr).isOk());
  ASSERT_TRUE(b.context->enqueue(nullptr).isOk());
  EXPECT_EQ(recorder.entries.size(), 2 * layers);
}

TEST(Profiler, ProfiledOutputsEqualUnprofiledOnes) {
  Bound b;
  ASSERT_NO_FATAL_FAILURE(bindDemo(b));
  ASSERT_TRUE(b.context->enqueue(nullptr).isOk());
  const std::vector<float> plain = b.scores;
  Recorder recorder;
  ASSERT_TRUE(b.context->setProfiler(&recorder).isOk());
  std::fill(b.scores.begin(), b.scores.end(), -1.f);
  ASSERT_TRUE(b.context->enqueue(nullptr).isOk());
  EXPECT_EQ(b.scores, plain);
}

TEST(DeviceEvent, CpuEventsMeasureTheTimeBetweenRecords) {
  Bound b;
  ASSERT_NO_FATAL_FAILURE(bindDemo(b));
  const IDevice& device = b.engine->getDevice();
  std::unique_ptr<IDeviceEvent> start, stop, never;
  ASSERT_TRUE(device.createEvent(start).isOk());
  ASSERT_TRUE(device.createEvent(stop).isOk());
  ASSERT_TRUE(device.createEvent(never).isOk());
  ASSERT_TRUE(start->record(nullptr).isOk());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(stop->record(nullptr).isOk());
  ASSERT_TRUE(stop->synchronize().isOk());
  double ms = 0;
  ASSERT_TRUE(stop->elapsedSince(*start, ms).isOk());
  EXPECT_GE(ms, 4.5);
  EXPECT_LT(ms, 5000);
  // An event never recorded has no time.
  EXPECT_FALSE(never->elapsedSince(*start, ms).isOk());
}

TEST(EngineMemory, CpuContextsHoldTheirArenaAndWeightsStayInThePlan) {
  Bound b;
  ASSERT_NO_FATAL_FAILURE(bindDemo(b));
  const EngineMemory memory = b.engine->getMemory();
  EXPECT_EQ(memory.weightBytes, 0u);  // the CPU reads weights in place
  EXPECT_GT(memory.contextBytes, 0u);
}

}  // namespace
}  // namespace kiln::testing
