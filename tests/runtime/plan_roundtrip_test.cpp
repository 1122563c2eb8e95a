// A plan written and read back is the same plan, field by field, and the same bytes.
#include <gtest/gtest.h>

#include "builder/plan_writer.h"
#include "core/plan.h"
#include "core/plan_test_util.h"
#include "runtime/plan_validate.h"

namespace kiln::plan {
namespace {

using testing::PlanMaker;

TEST(PlanRoundTrip, RichPlanIsReadBackExactly) {
  for (int round = 0; round < 5; ++round) {
    const uint64_t seed = testing::freshSeed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Plan plan = PlanMaker(seed).make();
    ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).message();

    std::vector<uint8_t> bytes;
    const Status w = writePlan(plan, bytes);
    ASSERT_TRUE(w.isOk()) << w.toString();
    Plan back;
    const Status r = readPlan(bytes.data(), bytes.size(), back);
    ASSERT_TRUE(r.isOk()) << r.toString();
    testing::expectSamePlan(plan, back);

    std::vector<uint8_t> again;
    ASSERT_TRUE(writePlan(back, again).isOk());
    EXPECT_EQ(bytes, again);
  }
}

TEST(PlanRoundTrip, EveryLayerTypeIsCovered) {
  const Plan plan = PlanMaker(testing::freshSeed()).make();
  std::vector<bool> seen(kLayerTypeCount, false);
  for (const Step& s : plan.steps) seen[static_cast<int32_t>(s.type)] = true;
  for (int32_t t = 0; t < kLayerTypeCount; ++t)
    if (isLayerTypeValue(t)) EXPECT_TRUE(seen[t]) << layerTypeName(static_cast<LayerType>(t));
}

// Value 26 is reserved (kiln/op_list.h) for an op landing elsewhere: no layer type yet, so a plan
// step that claims it is neither written nor validated.
TEST(PlanRoundTrip, AReservedLayerTypeValueIsRefused) {
  static_assert(isReservedLayerTypeValue(26) && !isLayerTypeValue(26));
  static_assert(isLayerTypeValue(27) && isLayerTypeValue(28));
  Plan plan = PlanMaker(testing::freshSeed()).make();
  plan.steps[0].type = static_cast<LayerType>(26);
  std::vector<uint8_t> bytes;
  const Status w = writePlan(plan, bytes);
  EXPECT_FALSE(w.isOk());
  EXPECT_NE(w.message().find("invalid layer type 26"), std::string::npos) << w.message();
  const Status v = validatePlan(plan);
  EXPECT_FALSE(v.isOk());
  EXPECT_NE(v.message().find("invalid layer type 26"), std::string::npos) << v.message();
}

TEST(PlanRoundTrip, StartsWithMagicAndVersionAndEndsWithTheChecksum) {
  const Plan plan = PlanMaker(testing::freshSeed()).make();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(writePlan(plan, bytes).isOk());
  ASSERT_GT(bytes.size(), 20u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "KILNPLAN");
  EXPECT_EQ(bytes[8], kFormatVersion);
  EXPECT_EQ(bytes[9] | bytes[10] | bytes[11], 0);
}

TEST(PlanRoundTrip, EmptyPlanRoundTrips) {
  Plan plan;
  plan.target = "cpu";
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(writePlan(plan, bytes).isOk());
  Plan back;
  back.target = "stale";
  ASSERT_TRUE(readPlan(bytes.data(), bytes.size(), back).isOk());
  testing::expectSamePlan(plan, back);
}

TEST(PlanRoundTrip, WriterRefusesAnInvalidPlan) {
  Plan plan = PlanMaker(testing::freshSeed()).make();
  plan.steps[0].inputs[0] = 1000;
  std::vector<uint8_t> bytes = {1, 2, 3};
  const Status s = writePlan(plan, bytes);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("invalid plan"), std::string::npos) << s.message();
  EXPECT_EQ(bytes, (std::vector<uint8_t>{1, 2, 3}));  // untouched
}

TEST(PlanRoundTrip, FailedReadLeavesThePlanUntouched) {
  const Plan plan = PlanMaker(testing::freshSeed()).make();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(writePlan(plan, bytes).isOk());
  bytes[bytes.size() / 2] ^= 0x5a;
  Plan target = plan;
  EXPECT_FALSE(readPlan(bytes.data(), bytes.size(), target).isOk());
  testing::expectSamePlan(plan, target);
}

}  // namespace
}  // namespace kiln::plan
