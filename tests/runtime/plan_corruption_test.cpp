// Damaged plans: every truncation, random corruption with and without a recomputed checksum, and
// the messages a user sees for the common cases.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "builder/plan_writer.h"
#include "core/checksum.h"
#include "core/plan.h"
#include "core/plan_test_util.h"
#include "runtime/plan_validate.h"

namespace kiln::plan {
namespace {

using testing::PlanMaker;

std::vector<uint8_t> richPlanBytes(uint64_t seed) {
  std::vector<uint8_t> bytes;
  const Status s = writePlan(PlanMaker(seed).make(), bytes);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return bytes;
}

void reseal(std::vector<uint8_t>& bytes) {
  if (bytes.size() < 8) return;
  const uint64_t crc = crc64(bytes.data(), bytes.size() - 8);
  for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// 1 to 8 bytes flipped or overwritten at random offsets; always differs from the original.
std::vector<uint8_t> corrupt(const std::vector<uint8_t>& original, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes = original;
  const int n = std::uniform_int_distribution<int>(1, 8)(rng);
  std::uniform_int_distribution<size_t> offset(0, bytes.size() - 1);
  for (int i = 0; i < n; ++i) {
    const size_t at = offset(rng);
    const uint8_t mask = static_cast<uint8_t>(std::uniform_int_distribution<int>(1, 255)(rng));
    if (std::uniform_int_distribution<int>(0, 1)(rng))
      bytes[at] ^= mask;
    else
      bytes[at] = static_cast<uint8_t>(original[at] ^ mask);  // "set" to some other value
  }
  if (bytes == original) bytes[offset(rng)] ^= 0x80;
  return bytes;
}

TEST(PlanCorruption, EveryTruncationIsRefused) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<uint8_t> bytes = richPlanBytes(seed);
  for (size_t n = 0; n < bytes.size(); ++n) {
    // A copy of exactly n bytes, so that ASan catches any read past the end.
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    for (bool verify : {true, false}) {
      Plan plan;
      const Status s = readPlan(cut.data(), cut.size(), plan, verify);
      ASSERT_EQ(s.code(), StatusCode::kCorruptData) << "length " << n << ": " << s.toString();
      if (n == 0) {
        EXPECT_TRUE(contains(s.message(), "not a kiln plan")) << s.message();
      } else {
        ASSERT_TRUE(contains(s.message(), "truncated at byte"))
            << "length " << n << ": " << s.message();
        EXPECT_TRUE(contains(s.message(), "rebuild it")) << s.message();
      }
    }
  }
}

TEST(PlanCorruption, RandomCorruptionsAreRefused) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> original = richPlanBytes(seed);
  int checksumCaught = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::vector<uint8_t> bytes = corrupt(original, rng);
    Plan plan;
    const Status s = readPlan(bytes.data(), bytes.size(), plan);
    ASSERT_FALSE(s.isOk()) << "corruption " << i << " was accepted";
    ASSERT_TRUE(s.code() == StatusCode::kCorruptData || s.code() == StatusCode::kUnsupported)
        << s.toString();
    ASSERT_FALSE(s.message().empty());
    checksumCaught += contains(s.message(), "checksum mismatch");
    // The structural checks alone must not crash either.
    Plan unchecked;
    (void)readPlan(bytes.data(), bytes.size(), unchecked, /*verifyChecksum=*/false);
  }
  // Most damage lands inside sections and only the checksum can see it.
  EXPECT_GT(checksumCaught, 5000);
}

TEST(PlanCorruption, ResealedCorruptionsFailCleanlyOrYieldAValidPlan) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::vector<uint8_t> original = richPlanBytes(seed);
  int refused = 0, accepted = 0;
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> bytes = corrupt(original, rng);
    reseal(bytes);
    Plan plan;
    const Status s = readPlan(bytes.data(), bytes.size(), plan);
    if (!s.isOk()) {
      ++refused;
      ASSERT_TRUE(s.code() == StatusCode::kCorruptData || s.code() == StatusCode::kUnsupported)
          << s.toString();
      ASSERT_TRUE(contains(s.message(), "rebuild") || contains(s.message(), "not a kiln plan"))
          << s.message();
      continue;
    }
    ++accepted;
    // Whatever got through is a plan that passes validation and survives its own round trip.
    const Status v = validatePlan(plan);
    ASSERT_TRUE(v.isOk()) << v.toString();
    std::vector<uint8_t> again;
    const Status w = writePlan(plan, again);
    ASSERT_TRUE(w.isOk()) << w.toString();
    Plan back;
    ASSERT_TRUE(readPlan(again.data(), again.size(), back).isOk());
  }
  // Both outcomes happen: structure damage is caught, data damage (weights, names) is not ours
  // to see once the checksum matches.
  EXPECT_GT(refused, 1000);
  EXPECT_GT(accepted, 100);
}

TEST(PlanCorruption, NotAPlan) {
  const std::string text = "this is a text file, not a plan";
  Plan plan;
  const Status s = readPlan(text.data(), text.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(s.message(), "not a kiln plan")) << s.message();
  EXPECT_FALSE(readPlan(nullptr, 0, plan).isOk());
}

TEST(PlanCorruption, NewerFormatVersionSaysRebuild) {
  std::vector<uint8_t> bytes = richPlanBytes(testing::freshSeed());
  bytes[8] = static_cast<uint8_t>(kFormatVersion + 1);
  reseal(bytes);
  Plan plan;
  const Status s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(s.message(), "format version " + std::to_string(kFormatVersion + 1)))
      << s.message();
  EXPECT_TRUE(contains(s.message(), "reads format version " + std::to_string(kFormatVersion)))
      << s.message();
  EXPECT_TRUE(contains(s.message(), "rebuild the plan with this kiln")) << s.message();
  // Unsealed too: the version is checked before the checksum, whose form may change with it.
  bytes[bytes.size() - 1] ^= 1;
  EXPECT_EQ(readPlan(bytes.data(), bytes.size(), plan).code(), StatusCode::kUnsupported);
}

// Version 1 plans stored layer parameters in a hand-written layout; they are refused, never
// misread through today's field lists.
TEST(PlanCorruption, OlderFormatVersionSaysBuiltByAnOlderKiln) {
  std::vector<uint8_t> bytes = richPlanBytes(testing::freshSeed());
  bytes[8] = 1;
  reseal(bytes);
  Plan plan;
  const Status s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(s.message(), "built by an older kiln")) << s.message();
  EXPECT_TRUE(contains(s.message(), "rebuild the plan")) << s.message();
}

TEST(PlanCorruption, ChecksumMismatchIsNamed) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<uint8_t> bytes = richPlanBytes(seed);
  bytes[bytes.size() - 9] ^= 0x10;  // the high byte of maxWorkspaceBytes
  Plan plan;
  const Status s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(s.message(), "corrupted: checksum mismatch")) << s.message();
  EXPECT_TRUE(contains(s.message(), "rebuild it")) << s.message();
}

TEST(PlanCorruption, UnknownSectionTagIsRefused) {
  std::vector<uint8_t> bytes = richPlanBytes(testing::freshSeed());
  // The first section tag follows the header: magic, version, two strings.
  size_t at = 12;
  for (int i = 0; i < 2; ++i)
    at += 4 + (bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16 | bytes[at + 3] << 24);
  ASSERT_EQ(bytes[at], 1);  // tensors
  bytes[at] = 77;
  reseal(bytes);
  Plan plan;
  Status s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(s.message(), "unknown section tag 77")) << s.message();
  EXPECT_TRUE(contains(s.message(), "at byte " + std::to_string(at))) << s.message();

  bytes[at] = 2;  // a known section out of order
  reseal(bytes);
  s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_TRUE(contains(s.message(), "section 'steps' where section 'tensors' was expected"))
      << s.message();
}

TEST(PlanCorruption, TrailingBytesAreRefused) {
  std::vector<uint8_t> bytes = richPlanBytes(testing::freshSeed());
  bytes.insert(bytes.end() - 8, {1, 2, 3});
  reseal(bytes);
  Plan plan;
  const Status s = readPlan(bytes.data(), bytes.size(), plan);
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(s.message(), "3 unexpected bytes after the last section")) << s.message();
}

}  // namespace
}  // namespace kiln::plan
