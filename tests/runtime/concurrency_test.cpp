// Several execution contexts of one engine, each on its own thread, all at once: the outputs of
// every run must be bit-identical (and the test must be clean under ThreadSanitizer).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "../tools/demo_network.h"
#include "kiln/kiln.h"
#include "runtime/demo_plan_test_util.h"

namespace kiln::testing {
namespace {

TEST(Concurrency, FourContextsOnFourThreadsAgreeBitForBit) {
  constexpr int kContexts = 4, kRuns = 200;
  const std::vector<uint8_t>& plan = demoPlan();
  ASSERT_FALSE(plan.empty());
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());

  // Fresh random image and boxes (boxes anywhere, some outside the image), valid indices.
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> pixel(-1.f, 1.f), coord(-0.2f, 1.2f);
  std::vector<float> image(3 * demo::kImageSize * demo::kImageSize), boxes(demo::kBoxes * 4);
  for (float& v : image) v = pixel(rng);
  for (float& v : boxes) v = coord(rng);
  std::vector<int32_t> indices(demo::kBoxes, 0);

  struct Worker {
    std::unique_ptr<IExecutionContext> context;
    std::vector<float> scores = std::vector<float>(demo::kBoxes * demo::kClasses);
    std::vector<float> first;
    bool allRunsEqual = true;
    Status status;
  };
  std::vector<Worker> workers(kContexts);
  for (Worker& w : workers) {
    ASSERT_TRUE(engine->createExecutionContext(w.context).isOk());
    ASSERT_TRUE(w.context->setTensorAddress("image", image.data()).isOk());
    ASSERT_TRUE(w.context->setTensorAddress("boxes", boxes.data()).isOk());
    ASSERT_TRUE(w.context->setTensorAddress("box_indices", indices.data()).isOk());
    ASSERT_TRUE(w.context->setTensorAddress("class_scores", w.scores.data()).isOk());
  }
  std::vector<std::thread> threads;
  for (Worker& w : workers) {
    threads.emplace_back([&w] {
      for (int r = 0; r < kRuns && w.status.isOk(); ++r) {
        w.status = w.context->enqueue(nullptr);
        if (r == 0)
          w.first = w.scores;
        else if (w.scores != w.first)
          w.allRunsEqual = false;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < kContexts; ++c) {
    ASSERT_TRUE(workers[c].status.isOk()) << workers[c].status.toString();
    EXPECT_TRUE(workers[c].allRunsEqual) << "context " << c << " changed between runs";
    EXPECT_EQ(std::memcmp(workers[c].first.data(), workers[0].first.data(),
                          workers[0].first.size() * sizeof(float)),
              0)
        << "context " << c << " disagrees with context 0";
  }
  // Scores are a softmax: each row sums to 1, so a run that computed nothing cannot pass.
  for (int b = 0; b < demo::kBoxes; ++b) {
    float sum = 0;
    for (int k = 0; k < demo::kClasses; ++k) sum += workers[0].first[b * demo::kClasses + k];
    EXPECT_NEAR(sum, 1.f, 1e-5f);
  }
}

TEST(Concurrency, EnqueueWithUnboundTensorsIsRefused) {
  const std::vector<uint8_t>& plan = demoPlan();
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(plan.data(), plan.size(), engine).isOk());
  std::unique_ptr<IExecutionContext> ctx;
  ASSERT_TRUE(engine->createExecutionContext(ctx).isOk());
  Status s = ctx->enqueue(nullptr);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("setTensorAddress"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::testing
