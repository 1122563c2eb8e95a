// The demo plan, damaged every way we can think of, must be refused with an error: every
// truncation, random byte corruptions, and corruptions re-sealed with a valid checksum (which
// reach the structural checks behind the checksum). Never a crash; run it under ASan.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "core/checksum.h"
#include "core/plan.h"
#include "kiln/kiln.h"
#include "runtime/demo_plan_test_util.h"
#include "runtime/engine_state.h"

namespace kiln::testing {
namespace {

class DemoPlanCorruption : public ::testing::Test {
 protected:
  void SetUp() override { setLogSeverity(Severity::kError); }
  void TearDown() override { setLogSeverity(Severity::kWarning); }
  static Status load(const std::vector<uint8_t>& bytes) {
    std::unique_ptr<IEngine> engine;
    return createRuntime()->deserializeEngine(bytes.data(), bytes.size(), engine);
  }
};

TEST_F(DemoPlanCorruption, IntactPlanLoads) {
  ASSERT_FALSE(demoPlan().empty());
  Status s = load(demoPlan());
  EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST_F(DemoPlanCorruption, EveryTruncationIsRefused) {
  const std::vector<uint8_t>& plan = demoPlan();
  for (size_t n = 0; n < plan.size(); ++n) {
    std::vector<uint8_t> cut(plan.begin(), plan.begin() + n);
    Status s = load(cut);
    ASSERT_FALSE(s.isOk()) << "a plan cut to " << n << " of " << plan.size() << " bytes loaded";
    ASSERT_FALSE(s.message().empty());
  }
}

TEST_F(DemoPlanCorruption, RandomCorruptionsAreRefused) {
  const std::vector<uint8_t>& plan = demoPlan();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> offset(0, plan.size() - 1);
  std::uniform_int_distribution<int> count(1, 8), byte(0, 255);
  for (int trial = 0; trial < 10000; ++trial) {
    std::vector<uint8_t> bad = plan;
    const int n = count(rng);
    for (int k = 0; k < n; ++k) bad[offset(rng)] ^= static_cast<uint8_t>(byte(rng) | 1);
    Status s = load(bad);
    ASSERT_FALSE(s.isOk()) << "seed " << seed << " trial " << trial << ": a corrupted plan loaded";
  }
}

// With the checksum recomputed, corruption reaches the field, index, shape and plugin checks.
// Those may accept a plan whose damage is harmless (a timing, a candidate name); whatever they
// accept must then run without touching memory it does not own (ASan watches).
TEST_F(DemoPlanCorruption, ResealedCorruptionsNeverCrash) {
  const std::vector<uint8_t>& plan = demoPlan();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> offset(0, plan.size() - 9);
  std::uniform_int_distribution<int> count(1, 4), byte(0, 255);
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<uint8_t> bad = plan;
    const int n = count(rng);
    for (int k = 0; k < n; ++k) bad[offset(rng)] ^= static_cast<uint8_t>(byte(rng) | 1);
    const uint64_t crc = crc64(bad.data(), bad.size() - 8);
    for (int b = 0; b < 8; ++b) bad[bad.size() - 8 + b] = static_cast<uint8_t>(crc >> (8 * b));
    std::unique_ptr<IEngine> engine;
    Status s = createRuntime()->deserializeEngine(bad.data(), bad.size(), engine);
    if (!s.isOk()) {
      ++refused;
      continue;
    }
    ++accepted;
    // Run what was accepted once, on zeroed inputs of the declared sizes.
    std::unique_ptr<IExecutionContext> ctx;
    if (!engine->createExecutionContext(ctx).isOk()) continue;
    std::vector<std::vector<uint8_t>> buffers;
    for (int32_t i = 0; i < engine->getNbIOTensors(); ++i) {
      const char* name = engine->getIOTensorName(i);
      const PluginTensorDesc d = engine->getTensorDesc(name);
      buffers.emplace_back(static_cast<size_t>(plan::tensorBytes(d.dims, d.type)) + 1, 0);
      ASSERT_TRUE(ctx->setTensorAddress(name, buffers.back().data()).isOk());
    }
    (void)ctx->enqueue(nullptr);
  }
  EXPECT_GT(refused, 0) << "seed " << seed;
  std::printf("re-sealed corruptions: %d refused, %d accepted and run\n", refused, accepted);
  RecordProperty("accepted", accepted);
}

}  // namespace
}  // namespace kiln::testing
