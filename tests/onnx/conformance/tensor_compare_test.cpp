// The conformance runner's comparison rules: ONNX's rtol/atol, NaN and infinities, exact integers,
// exact shapes, and test data converted to the engine's type and layout.
#include "conformance/tensor_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace kiln::conformance {
namespace {

class TensorCompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }
  // Random fp32 values in +-[0.5, 10): never zero, so relative bounds bite.
  OnnxTensor randomFloats(const Dims& dims) {
    OnnxTensor t;
    t.name = "t";
    t.type = DataType::kFLOAT;
    t.dims = dims;
    std::uniform_real_distribution<float> mag(0.5f, 10.f);
    std::bernoulli_distribution sign(0.5);
    const int64_t n = volume(dims);
    t.data.resize(static_cast<size_t>(n) * 4);
    for (int64_t i = 0; i < n; ++i) set(t, i, sign(rng_) ? -mag(rng_) : mag(rng_));
    return t;
  }
  static float get(const OnnxTensor& t, int64_t i) {
    float v;
    std::memcpy(&v, t.data.data() + 4 * i, 4);
    return v;
  }
  static void set(OnnxTensor& t, int64_t i, float v) { std::memcpy(t.data.data() + 4 * i, &v, 4); }
  static EngineBuffer asEngine(const OnnxTensor& t) {
    EngineBuffer b;
    b.desc.dims = t.dims;
    b.desc.type = t.type;
    b.data = t.data;
    return b;
  }
  unsigned seed_ = 0;
  std::mt19937 rng_;
};

TEST_F(TensorCompareTest, RelativeBoundIsOnnxDefault) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const OnnxTensor want = randomFloats(makeDims({2, 3, 5}));
  OnnxTensor inside = want, outside = want;
  const int64_t k = std::uniform_int_distribution<int64_t>(0, 29)(rng_);
  set(inside, k, get(want, k) * (1 + 0.9e-3f));
  set(outside, k, get(want, k) * (1 + 1.2e-3f));
  std::string detail;
  EXPECT_TRUE(compareOutput(asEngine(inside), want, Tolerance(), detail)) << detail;
  EXPECT_FALSE(compareOutput(asEngine(outside), want, Tolerance(), detail));
  EXPECT_NE(detail.find("1/30 values differ; first at " + std::to_string(k)), std::string::npos)
      << detail;
  // A looser documented bound accepts it.
  EXPECT_TRUE(compareOutput(asEngine(outside), want, Tolerance{2e-3, 1e-7}, detail)) << detail;
}

TEST_F(TensorCompareTest, NanMatchesOnlyNanAndInfinitiesMatchBySign) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  OnnxTensor want = randomFloats(makeDims({8}));
  set(want, 1, std::numeric_limits<float>::quiet_NaN());
  set(want, 2, std::numeric_limits<float>::infinity());
  std::string detail;
  EXPECT_TRUE(compareOutput(asEngine(want), want, Tolerance(), detail)) << detail;
  OnnxTensor got = want;
  set(got, 1, 0.75f);
  EXPECT_FALSE(compareOutput(asEngine(got), want, Tolerance(), detail));
  got = want;
  set(got, 2, -std::numeric_limits<float>::infinity());
  EXPECT_FALSE(compareOutput(asEngine(got), want, Tolerance(), detail));
  got = want;
  set(got, 3, std::numeric_limits<float>::quiet_NaN());
  EXPECT_FALSE(compareOutput(asEngine(got), want, Tolerance(), detail));
}

TEST_F(TensorCompareTest, ShapesMustMatchExactly) {
  const OnnxTensor want = randomFloats(makeDims({2, 6}));
  EngineBuffer got = asEngine(want);
  got.desc.dims = makeDims({12});
  std::string detail;
  EXPECT_FALSE(compareOutput(got, want, Tolerance(), detail));
  EXPECT_NE(detail.find("expected [2,6]"), std::string::npos) << detail;
}

TEST_F(TensorCompareTest, IntegersAreExactAcrossWidths) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  OnnxTensor want;
  want.type = DataType::kINT64;
  want.dims = makeDims({16});
  want.data.resize(16 * 8);
  std::uniform_int_distribution<int64_t> d(-100000, 100000);
  for (int64_t i = 0; i < 16; ++i) {
    const int64_t v = d(rng_) | 1;  // never zero
    std::memcpy(want.data.data() + 8 * i, &v, 8);
  }
  PluginTensorDesc desc;
  desc.dims = want.dims;
  desc.type = DataType::kINT32;
  EngineBuffer got;
  ASSERT_TRUE(toEngineBuffer(want, desc, got).isOk());
  std::string detail;
  EXPECT_TRUE(compareOutput(got, want, Tolerance(), detail)) << detail;
  int32_t v;
  std::memcpy(&v, got.data.data() + 4 * 5, 4);
  v += 1;  // off by one is a failure whatever the relative bound
  std::memcpy(got.data.data() + 4 * 5, &v, 4);
  EXPECT_FALSE(compareOutput(got, want, Tolerance{1.0, 1.0}, detail));
}

TEST_F(TensorCompareTest, ChannelsLastLayoutRoundTrips) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  const OnnxTensor src = randomFloats(makeDims({2, 3, 4, 5}));
  PluginTensorDesc desc;
  desc.dims = src.dims;
  desc.type = DataType::kFLOAT;
  desc.format = TensorFormat::kCHANNELS_LAST;
  EngineBuffer nhwc;
  ASSERT_TRUE(toEngineBuffer(src, desc, nhwc).isOk());
  // Element (n=0, c=1, h=0, w=0) sits at NHWC offset 1 and NCHW offset H*W.
  float moved;
  std::memcpy(&moved, nhwc.data.data() + 4 * 1, 4);
  EXPECT_EQ(moved, get(src, 20));
  std::string detail;
  EXPECT_TRUE(compareOutput(nhwc, src, Tolerance(), detail)) << detail;
  nhwc.desc.format = TensorFormat::kLINEAR;  // the same bytes read as NCHW are wrong
  EXPECT_FALSE(compareOutput(nhwc, src, Tolerance(), detail));
}

TEST_F(TensorCompareTest, TestDataOfTheWrongShapeIsRefused) {
  const OnnxTensor src = randomFloats(makeDims({3, 4}));
  PluginTensorDesc desc;
  desc.dims = makeDims({4, 3});
  EngineBuffer out;
  const Status s = toEngineBuffer(src, desc, out);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("[3,4]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kiln::conformance
