// The byte layer under the plan format: little-endian encoding, bounds-checked reads with
// located errors, and the checksum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "core/byte_io.h"
#include "core/checksum.h"
#include "core/plan_codec.h"
#include "core/plan_test_util.h"

namespace kiln {
namespace {

TEST(Checksum, MatchesTheCrc64XzCheckValue) {
  // The catalogue's check value for CRC-64/XZ over "123456789".
  EXPECT_EQ(crc64("123456789", 9), 0x995DC9BBDF1939FAull);
  EXPECT_EQ(crc64("", 0), 0u);
}

TEST(Checksum, SlicedPathAgreesWithBytewiseStreaming) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> data(1000 + rng() % 1000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  uint64_t state = kCrc64Init;
  for (uint8_t b : data) state = crc64Update(state, &b, 1);
  EXPECT_EQ(crc64(data.data(), data.size()), crc64Final(state));
  // Any single flipped bit changes it.
  const uint64_t before = crc64(data.data(), data.size());
  data[rng() % data.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
  EXPECT_NE(crc64(data.data(), data.size()), before);
}

TEST(ByteIo, RoundTripsEveryTypeLittleEndian) {
  const uint64_t seed = testing::freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const uint32_t u32 = static_cast<uint32_t>(rng()) | 1;
  const uint64_t u64 = rng() | 1;
  const int32_t i32 = -static_cast<int32_t>(rng() % 1000000) - 1;
  const int64_t i64 = -static_cast<int64_t>(rng() % 1000000000000) - 1;
  const float f = -std::numeric_limits<float>::quiet_NaN();
  const double d = std::ldexp(static_cast<double>(rng() % 1000 + 1), -1070);  // subnormal
  const std::string s = std::string("n\0me", 4) + std::to_string(rng());

  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.u32(0x04030201);
  w.u32(u32);
  w.u64(u64);
  w.i32(i32);
  w.i64(i64);
  w.f32(f);
  w.f64(d);
  w.boolean(true);
  w.boolean(false);
  w.string(s);
  // A copy: the writer appends to `bytes`, which may move, so it must not read from it.
  const std::vector<uint8_t> head(bytes.begin(), bytes.begin() + 3);
  w.blob(head.data(), 3);
  ASSERT_EQ(bytes[0], 1);
  ASSERT_EQ(bytes[3], 4);

  ByteReader r(bytes.data(), bytes.size());
  uint32_t a, ru32;
  uint64_t ru64;
  int32_t ri32;
  int64_t ri64;
  float rf;
  double rd;
  bool t, fl;
  std::string rs;
  std::vector<uint8_t> blob;
  ASSERT_TRUE(r.u32(a, "a").isOk());
  ASSERT_TRUE(r.u32(ru32, "u32").isOk());
  ASSERT_TRUE(r.u64(ru64, "u64").isOk());
  ASSERT_TRUE(r.i32(ri32, "i32").isOk());
  ASSERT_TRUE(r.i64(ri64, "i64").isOk());
  ASSERT_TRUE(r.f32(rf, "f32").isOk());
  ASSERT_TRUE(r.f64(rd, "f64").isOk());
  ASSERT_TRUE(r.boolean(t, "t").isOk());
  ASSERT_TRUE(r.boolean(fl, "f").isOk());
  ASSERT_TRUE(r.string(rs, 100, "s").isOk());
  ASSERT_TRUE(r.blob(blob, "blob").isOk());
  EXPECT_TRUE(r.atEnd());
  EXPECT_EQ(a, 0x04030201u);
  EXPECT_EQ(ru32, u32);
  EXPECT_EQ(ru64, u64);
  EXPECT_EQ(ri32, i32);
  EXPECT_EQ(ri64, i64);
  EXPECT_EQ(std::bit_cast<uint32_t>(rf), std::bit_cast<uint32_t>(f));
  EXPECT_EQ(std::bit_cast<uint64_t>(rd), std::bit_cast<uint64_t>(d));
  EXPECT_TRUE(t);
  EXPECT_FALSE(fl);
  EXPECT_EQ(rs, s);
  EXPECT_EQ(blob, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 3));
}

TEST(ByteIo, TruncationSaysWhereAndWhat) {
  const uint8_t data[6] = {1, 2, 3, 4, 5, 6};
  ByteReader r(data, sizeof(data), 100);
  r.setSection("steps");
  r.setItem("step", 3);
  uint32_t v;
  ASSERT_TRUE(r.u32(v, "layer type").isOk());
  const Status s = r.u32(v, "layer type");
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_NE(s.message().find("truncated at byte 104 while reading layer type of step 3 in "
                             "section 'steps'"),
            std::string::npos)
      << s.message();
}

TEST(ByteIo, RefusesBoolsOtherThanZeroAndOne) {
  for (int value = 2; value < 256; value += 37) {
    const uint8_t data[1] = {static_cast<uint8_t>(value)};
    ByteReader r(data, 1);
    bool b;
    const Status s = r.boolean(b, "flag");
    EXPECT_EQ(s.code(), StatusCode::kCorruptData);
    EXPECT_NE(s.message().find("invalid bool"), std::string::npos) << s.message();
  }
}

TEST(ByteIo, RefusesEnumsOutOfRange) {
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.u32(kDataTypeCount);
  w.u32(0xffffffffu);
  ByteReader r(bytes.data(), bytes.size());
  DataType t;
  Status s = r.enumValue(t, kDataTypeCount, "data type");
  EXPECT_NE(s.message().find("invalid data type value 7"), std::string::npos) << s.message();
  ByteReader r2(bytes.data() + 4, 4);
  s = r2.enumValue(t, kDataTypeCount, "data type");
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
}

TEST(ByteIo, CountsAreBoundedByTheBytesLeft) {
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.u32(5);
  for (int i = 0; i < 16; ++i) w.u8(7);
  ByteReader r(bytes.data(), bytes.size());
  uint32_t n;
  // 5 elements of at least 4 bytes need 20; only 16 remain.
  const Status s = r.count(n, 4, "input count");
  EXPECT_EQ(s.code(), StatusCode::kCorruptData);
  EXPECT_NE(s.message().find("only 16 remain"), std::string::npos) << s.message();
  ByteReader r2(bytes.data(), bytes.size());
  EXPECT_TRUE(r2.count(n, 3, "input count").isOk());
  EXPECT_EQ(n, 5u);
}

TEST(ByteIo, StringsAndBlobsRespectTheirLimits) {
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.string("abcdef");
  ByteReader r(bytes.data(), bytes.size());
  std::string s;
  EXPECT_NE(r.string(s, 5, "name").message().find("more than the maximum 5"), std::string::npos);
  // A blob claiming more than is there.
  std::vector<uint8_t> b2;
  ByteWriter w2(b2);
  w2.u64(uint64_t{1} << 62);
  w2.u8(1);
  ByteReader r2(b2.data(), b2.size());
  std::vector<uint8_t> blob;
  const Status st = r2.blob(blob, "weights");
  EXPECT_EQ(st.code(), StatusCode::kCorruptData);
  EXPECT_NE(st.message().find("truncated at byte 8"), std::string::npos) << st.message();
}

TEST(PlanCodec, DimsRankOutsideZeroToEightIsRefused) {
  for (int32_t rank : {-1, 9, 1000}) {
    std::vector<uint8_t> bytes;
    ByteWriter w(bytes);
    w.i32(rank);
    for (int i = 0; i < 16; ++i) w.i64(1);
    ByteReader r(bytes.data(), bytes.size());
    Dims d;
    const Status s = plan::readDims(r, d, "dims");
    EXPECT_EQ(s.code(), StatusCode::kCorruptData);
    EXPECT_NE(s.message().find("rank " + std::to_string(rank)), std::string::npos) << s.message();
  }
}

TEST(PlanCodec, ParamsOfTheWrongAlternativeAreNotWritten) {
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  EXPECT_FALSE(plan::writeLayerParams(w, LayerType::kSOFTMAX, ConvolutionParams{}).isOk());
  EXPECT_FALSE(plan::writeLayerParams(w, LayerType::kPLUGIN, SoftmaxParams{}).isOk());
  EXPECT_FALSE(plan::writeLayerParams(w, static_cast<LayerType>(99), std::monostate{}).isOk());
  EXPECT_TRUE(plan::writeLayerParams(w, LayerType::kPLUGIN, std::monostate{}).isOk());
  EXPECT_TRUE(bytes.empty());
}

TEST(PlanCodec, ParamBoolsAndEnumsAreChecked) {
  // Matrix multiply: two bools.
  const uint8_t mm[2] = {1, 3};
  ByteReader r(mm, 2);
  LayerParams p;
  Status s = plan::readLayerParams(r, LayerType::kMATRIX_MULTIPLY, p);
  EXPECT_NE(s.message().find("invalid bool 3"), std::string::npos) << s.message();
  // Activation type beyond the enum.
  std::vector<uint8_t> bytes;
  ByteWriter w(bytes);
  w.u32(static_cast<uint32_t>(enumCount(ActivationType{})));
  w.f32(1.f);
  w.f32(2.f);
  ByteReader r2(bytes.data(), bytes.size());
  s = plan::readLayerParams(r2, LayerType::kACTIVATION, p);
  EXPECT_NE(s.message().find("invalid Activation type value"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln
