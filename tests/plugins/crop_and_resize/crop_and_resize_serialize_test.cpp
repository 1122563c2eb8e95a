// CropAndResize's serialized form: exact round trips, and bad bytes refused without a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "crop_and_resize_test_util.h"
#include "kiln/plugin_utils.h"

namespace kiln::testing {
namespace {

class CropAndResizeSerializeTest : public SeededTest {
 protected:
  // A plugin with random fields, configured for a random valid combination half of the time.
  PluginPtr randomPlugin() {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); };
    Fields f;
    f.i32("crop_height", pick(1, 1 << 20)).i32("crop_width", pick(1, 64));
    f.str("method", pick(0, 1) ? "nearest" : "bilinear");
    uint32_t bits = static_cast<uint32_t>(rng_());
    if (pick(0, 3) == 0) bits = 0x7fc00000u | (bits & 0x3fffffu);  // a NaN with a payload
    float extrapolation;
    std::memcpy(&extrapolation, &bits, 4);
    f.f32("extrapolation_value", extrapolation);
    PluginPtr p = create(f);
    EXPECT_TRUE(p) << lastError(creator());
    if (!p || pick(0, 1)) return p;
    const DataType types[] = {DataType::kFLOAT, DataType::kHALF, DataType::kBF16};
    const DataType type = types[pick(0, 2)];
    const DataType boxes = pick(0, 1) ? type : DataType::kFLOAT;
    const TensorFormat fmt = pick(0, 1) ? TensorFormat::kCHANNELS_LAST : TensorFormat::kLINEAR;
    PluginTensorDesc in[3] = {desc(makeDims({2, 3, 5, 5}), type, fmt),
                              desc(makeDims({4, 4}), boxes), desc(makeDims({4}), DataType::kINT32)};
    PluginTensorDesc out = desc(makeDims({4, 3, 0, 0}), type);
    int nbInputs = 3;
    if (pick(0, 1)) {
      nbInputs = 2;
      in[1] = desc(makeDims({2, 4, 4}), boxes);
      out = desc(makeDims({2, 4, 3, 0, 0}), type);
    } else if (pick(0, 1)) {
      out.format = TensorFormat::kCHANNELS_LAST;
    }
    out.dims.d[out.dims.nbDims - 2] = -1;  // unknown dims (a dynamic build) are accepted
    out.dims.d[out.dims.nbDims - 1] = -1;
    EXPECT_EQ(p->configurePlugin(kiln::staticPluginTensorDescs(in, nbInputs).data(), nbInputs,
                                 kiln::staticPluginTensorDescs(&out, 1).data(), 1),
              kPLUGIN_SUCCESS)
        << lastError(p.get());
    return p;
  }
};

TEST_F(CropAndResizeSerializeTest, RoundTripIsExact) {
  for (int i = 0; i < 200; ++i) {
    PluginPtr p = randomPlugin();
    ASSERT_TRUE(p);
    const std::vector<uint8_t> bytes = serializeToBytes(*p);
    PluginPtr q(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
    ASSERT_TRUE(q) << lastError(creator());
    EXPECT_EQ(serializeToBytes(*q), bytes);
    PluginPtr r(q->clone());
    ASSERT_TRUE(r);
    EXPECT_EQ(serializeToBytes(*r), bytes);
    PluginPtr s(p->clone());
    ASSERT_TRUE(s);
    EXPECT_EQ(serializeToBytes(*s), bytes);
  }
}

TEST_F(CropAndResizeSerializeTest, TruncatedOrExtendedBytesAreRefused) {
  PluginPtr p = randomPlugin();
  ASSERT_TRUE(p);
  std::vector<uint8_t> bytes = serializeToBytes(*p);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(creator()->deserializePlugin("crop0", bytes.data(), n)) << n;
    EXPECT_NE(lastError(creator()).find("bytes"), std::string::npos) << lastError(creator());
  }
  bytes.push_back(0);
  EXPECT_FALSE(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
  EXPECT_FALSE(creator()->deserializePlugin("crop0", nullptr, 44));
}

// Whatever the bytes, deserializePlugin refuses them with a message or makes an object that
// writes them back exactly (and can be cloned and asked for its shapes).
TEST_F(CropAndResizeSerializeTest, GarbageIsRefusedOrRoundTrips) {
  PluginPtr p = randomPlugin();
  ASSERT_TRUE(p);
  const std::vector<uint8_t> good = serializeToBytes(*p);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> bytes = good;
    const int mode = i % 3;
    if (mode == 0) {  // one byte changed
      bytes[rng_() % bytes.size()] = static_cast<uint8_t>(rng_());
    } else if (mode == 1) {                                       // one 32-bit word replaced
      const uint32_t w = static_cast<uint32_t>(rng_() % 8) - 2u;  // small values: near-valid enums
      std::memcpy(&bytes[4 * (rng_() % (bytes.size() / 4))], &w, 4);
    } else {  // all random
      for (auto& b : bytes) b = static_cast<uint8_t>(rng_());
    }
    PluginPtr q(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
    if (!q) {
      ++refused;
      EXPECT_NE(creator()->getLastError(), nullptr);
      continue;
    }
    ++accepted;
    EXPECT_EQ(serializeToBytes(*q), bytes);
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

TEST(CropAndResizeSerialize, SpecificBadValuesAreNamed) {
  Fields f = cropFields(2, 3);
  PluginPtr p = create(f);
  ASSERT_TRUE(p);
  const std::vector<uint8_t> good = serializeToBytes(*p);
  ASSERT_EQ(good.size(), 44u);
  auto refusedWith = [&](size_t word, int32_t value, const char* text) {
    std::vector<uint8_t> bytes = good;
    std::memcpy(&bytes[4 * word], &value, 4);
    PluginPtr q(creator()->deserializePlugin("crop0", bytes.data(), bytes.size()));
    EXPECT_FALSE(q) << word;
    EXPECT_NE(lastError(creator()).find(text), std::string::npos) << lastError(creator());
  };
  refusedWith(0, 0x12345678, "magic");
  refusedWith(1, 0, "crop size");
  refusedWith(2, -4, "crop size");
  refusedWith(3, 2, "method");
  refusedWith(5, 4, "input count");
  refusedWith(6, 1, "unconfigured");  // configuration bytes on an unconfigured plugin
}

TEST(CropAndResizeSerialize, SmallBufferIsAnError) {
  Fields f = cropFields(2, 3);
  PluginPtr p = create(f);
  ASSERT_TRUE(p);
  std::vector<uint8_t> buffer(p->getSerializationSize() - 1);
  EXPECT_NE(p->serialize(buffer.data(), buffer.size()), kPLUGIN_SUCCESS);
  EXPECT_NE(lastError(p.get()).find("bytes"), std::string::npos);
  EXPECT_NE(p->serialize(nullptr, 100), kPLUGIN_SUCCESS);
}

TEST(CropAndResizeSerialize, CloneKeepsNamespaceAndConfiguration) {
  Fields f = cropFields(2, 3, "nearest", 1.5f);
  PluginPtr p = create(f);
  ASSERT_TRUE(p);
  p->setPluginNamespace("my.ns");
  const PluginTensorDesc in[] = {desc(makeDims({1, 2, 4, 4}), DataType::kHALF),
                                 desc(makeDims({1, 3, 4}), DataType::kHALF)};
  const PluginTensorDesc out = desc(makeDims({1, 3, 2, 2, 3}), DataType::kHALF);
  ASSERT_EQ(p->configurePlugin(kiln::staticPluginTensorDescs(in, 2).data(), 2,
                               kiln::staticPluginTensorDescs(&out, 1).data(), 1),
            kPLUGIN_SUCCESS)
      << lastError(p.get());
  PluginPtr c(p->clone());
  ASSERT_TRUE(c);
  EXPECT_STREQ(c->getPluginNamespace(), "my.ns");
  EXPECT_EQ(serializeToBytes(*c), serializeToBytes(*p));
  // The clone enqueues without being configured itself. Nearest, whole-image boxes on 4x4:
  // rows land on 0 and 3, columns on 0, 1.5 -> 2 (half away from zero) and 3.
  uint16_t image[32];
  for (int i = 0; i < 32; ++i) image[i] = floatToHalf(static_cast<float>(i + 1));
  uint16_t boxes[12];
  for (int b = 0; b < 3; ++b) {
    const float box[4] = {0, 0, 1, 1};
    for (int j = 0; j < 4; ++j) boxes[4 * b + j] = floatToHalf(box[j]);
  }
  uint16_t result[36];
  const void* ins[] = {image, boxes};
  void* outs[] = {result};
  ASSERT_EQ(c->enqueue(in, &out, ins, outs, nullptr, nullptr), kPLUGIN_SUCCESS)
      << lastError(c.get());
  for (int b = 0; b < 3; ++b)
    for (int ch = 0; ch < 2; ++ch)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) {
          const int row = y == 0 ? 0 : 3, col = x == 0 ? 0 : x + 1;
          EXPECT_EQ(halfToFloat(result[((b * 2 + ch) * 2 + y) * 3 + x]),
                    static_cast<float>(ch * 16 + row * 4 + col + 1));
        }
}

}  // namespace
}  // namespace kiln::testing
