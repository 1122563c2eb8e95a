// GroupNormalization: its shape and type rules and their errors, and its CPU tactic against the
// ONNX definition (opset 21: per-channel Scale and B) written out here in double precision, on
// random shapes and group counts; and fp16/bf16 groups of large activations with a small spread,
// where statistics taken in fp16 would overflow, staying finite and accurate.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using P = GroupNormalizationParams;
constexpr LayerType kGN = LayerType::kGROUP_NORMALIZATION;

P params(int32_t groups, float epsilon = 1e-5f) {
  P p;
  p.numGroups = groups;
  p.epsilon = epsilon;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Shape and type rules

TEST(GroupNormalization, ShapeRuleKeepsXsShapeAndType) {
  EXPECT_EQ(inferLayerOk(kGN, params(2), {f32({2, 4, 8}), f32({4}), f32({4})}).dims,
            makeDims({2, 4, 8}));
  EXPECT_EQ(inferLayerOk(kGN, params(6), {f32({1, 6}), f32({6}), f32({6})}).dims, makeDims({1, 6}));
  const TensorShape h = inferLayerOk(kGN, params(1),
                                     {typed({2, 3, 4, 4}, DataType::kHALF),
                                      typed({3}, DataType::kHALF), typed({3}, DataType::kHALF)});
  EXPECT_EQ(h.type, DataType::kHALF);
}

TEST(GroupNormalization, ShapeRuleSaysWhatIsWrong) {
  EXPECT_MENTIONS(inferLayerError(kGN, params(3), {f32({2, 4, 8}), f32({4}), f32({4})}),
                  "the 4 channels of X [2,4,8] do not split into 3 groups");
  EXPECT_MENTIONS(inferLayerError(kGN, params(0), {f32({2, 4, 8}), f32({4}), f32({4})}),
                  "numGroups 0 must be >= 1");
  EXPECT_MENTIONS(inferLayerError(kGN, params(2), {f32({2, 4, 8}), f32({2}), f32({4})}),
                  "Scale (input 1) is [2], expected [4] (one per channel)");
  EXPECT_MENTIONS(inferLayerError(kGN, params(2), {f32({2, 4, 8}), f32({4}), f32({1, 4})}),
                  "B (input 2)");
  EXPECT_MENTIONS(inferLayerError(kGN, params(1), {f32({4}), f32({4}), f32({4})}), "rank >= 2");
  EXPECT_MENTIONS(
      inferLayerError(kGN, params(1), {typed({2, 4}, DataType::kINT8), f32({4}), f32({4})}),
      "only fp32, fp16 and bf16");
  EXPECT_MENTIONS(inferLayerError(kGN, params(1), {f32({2, 4}), f32({4})}), "expects 3 inputs");
  EXPECT_MENTIONS(inferLayerError(kGN, params(1, NAN), {f32({2, 4}), f32({4}), f32({4})}),
                  "epsilon");
}

TEST(GroupNormalization, TypeRuleComputesFloatsInFp32) {
  std::vector<DataType> types = {DataType::kBF16, DataType::kBF16, DataType::kBF16};
  std::string why;
  ASSERT_TRUE(ops::computeTypes(kGN, P{}, types, why)) << why;
  for (DataType t : types) EXPECT_EQ(t, DataType::kFLOAT);
}

// ---------------------------------------------------------------------------------------------
// The definition, in double: for each sample n and group g, the mean and biased variance over the
// group's channels and their spatial elements, then (x - mean) / sqrt(var + eps) * scale[c] +
// bias[c] for every element of channel c.
std::vector<double> definition(const Dims& x, int32_t groups, float eps,
                               const std::vector<double>& xv, const std::vector<double>& sv,
                               const std::vector<double>& bv) {
  const int64_t n = x.d[0], c = x.d[1], per = c / groups;
  int64_t spatial = 1;
  for (int32_t i = 2; i < x.nbDims; ++i) spatial *= x.d[i];
  std::vector<double> y(xv.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = (b * c + g * per) * spatial, count = per * spatial;
      if (count == 0) continue;
      double mean = 0, var = 0;
      for (int64_t k = 0; k < count; ++k) mean += xv[static_cast<size_t>(begin + k)];
      mean /= static_cast<double>(count);
      for (int64_t k = 0; k < count; ++k) {
        const double d = xv[static_cast<size_t>(begin + k)] - mean;
        var += d * d;
      }
      var /= static_cast<double>(count);
      for (int64_t k = 0; k < count; ++k) {
        const size_t e = static_cast<size_t>(begin + k);
        const size_t ch = static_cast<size_t>(g * per + k / spatial);
        y[e] = (xv[e] - mean) / std::sqrt(var + eps) * sv[ch] + bv[ch];
      }
    }
  return y;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(GroupNormalization, ReferenceMatchesTheDefinitionOnRandomProblems) {
  Rng rng;
  for (int trial = 0; trial < 80; ++trial) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(2, 5));
    const int32_t groups = static_cast<int32_t>(rng.uniformInt(1, 4));
    Dims x = rng.dims(rank, 5);
    x.d[1] = groups * rng.uniformInt(1, 3);
    const float eps = rng.coin() ? 1e-5f : rng.uniformFloat(1e-4f, 0.5f);
    const auto xv = rng.floats(volume(x), -3.f, 3.f);
    const auto sv = rng.floats(x.d[1], -2.f, 2.f), bv = rng.floats(x.d[1]);
    const std::string trace =
        dimsString(x) + " groups " + std::to_string(groups) + ", " + rng.trace();
    const auto y = runReference(kGN, &ops::GroupNormalization::infer, params(groups, eps),
                                ops::GroupNormalization::cpuTactics(),
                                {x, makeDims({x.d[1]}), makeDims({x.d[1]})},
                                {xv.data(), sv.data(), bv.data()});
    // A group of two close values has a tiny sigma, which FP32's mean error is divided by.
    expectNearScaled(y, definition(x, groups, eps, widen(xv), widen(sv), widen(bv)), 5e-5, trace);
  }
}

TEST(GroupNormalization, HandComputed) {
  // X [1, 2, 2], two groups of one channel: {1, 3} (mean 2, var 1) and {5, 5} (var 0); with
  // epsilon 3 the first divisor is 2, the second sqrt(3), where x - mean is 0 and y is the bias.
  const std::vector<float> x = {1, 3, 5, 5}, s = {4, 2}, b = {0.5f, -1};
  expectNearScaled(runReference(kGN, &ops::GroupNormalization::infer, params(2, 3.f),
                                ops::GroupNormalization::cpuTactics(),
                                {makeDims({1, 2, 2}), makeDims({2}), makeDims({2})},
                                {x.data(), s.data(), b.data()}),
                   {-1.5, 2.5, -1, -1}, 1e-7, "two groups");
  // One group over both channels: mean 3.5, var 2.75; per-channel scale and bias still apply.
  const double inv = 1 / std::sqrt(2.75 + 3.0);
  expectNearScaled(
      runReference(kGN, &ops::GroupNormalization::infer, params(1, 3.f),
                   ops::GroupNormalization::cpuTactics(),
                   {makeDims({1, 2, 2}), makeDims({2}), makeDims({2})},
                   {x.data(), s.data(), b.data()}),
      {-2.5 * inv * 4 + 0.5, -0.5 * inv * 4 + 0.5, 1.5 * inv * 2 - 1, 1.5 * inv * 2 - 1}, 1e-6,
      "one group");
}

TEST(GroupNormalization, EmptyTensorsRunAndWriteNothing) {
  for (const Dims& x : {makeDims({0, 4, 3}), makeDims({2, 4, 0})}) {
    const std::vector<float> s(4, 1.f);
    const auto y = runReference(kGN, &ops::GroupNormalization::infer, params(2),
                                ops::GroupNormalization::cpuTactics(),
                                {x, makeDims({4}), makeDims({4})}, {nullptr, s.data(), s.data()});
    EXPECT_TRUE(y.empty()) << dimsString(x);
  }
}

TEST(GroupNormalization, HalfGroupsOfLargeActivationsStayFiniteAndAccurate) {
  Rng rng;
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    const Dims x = makeDims({2, 8, 256});
    const bool half = t == DataType::kHALF;
    auto toBits = [&](float v) { return half ? floatToHalf(v) : floatToBf16(v); };
    auto fromBits = [&](uint16_t v) { return half ? halfToFloat(v) : bf16ToFloat(v); };
    std::vector<uint16_t> xb, sb, bb;
    std::vector<double> xv, sv, bv;
    for (float v : rng.floats(volume(x), 1e4f - 40.f, 1e4f + 40.f)) {
      xb.push_back(toBits(v));
      xv.push_back(fromBits(xb.back()));
    }
    for (float v : rng.floats(8, 0.5f, 2.f)) {
      sb.push_back(toBits(v));
      sv.push_back(fromBits(sb.back()));
    }
    for (float v : rng.floats(8, -1.f, 1.f)) {
      bb.push_back(toBits(v));
      bv.push_back(fromBits(bb.back()));
    }
    const Dims c = makeDims({8});
    Dims outDims;
    Status st;
    const auto out = runReferenceBytes(
        kGN, ops::GroupNormalization::cpuTactics(), &ops::GroupNormalization::infer, params(4),
        {desc(x, t), desc(c, t), desc(c, t)}, {xb.data(), sb.data(), bb.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_EQ(outDims, x);
    const auto want = definition(x, 4, 1e-5f, xv, sv, bv);
    const double tol = half ? 5e-3 : 4e-2;
    for (size_t e = 0; e < want.size(); ++e) {
      const double got = readElement(out.data(), t, static_cast<int64_t>(e));
      ASSERT_TRUE(std::isfinite(got)) << dataTypeName(t) << " element " << e;
      ASSERT_NEAR(got, want[e], tol * (1 + std::fabs(want[e])))
          << dataTypeName(t) << " element " << e << ", " << rng.trace();
    }
  }
}

TEST(GroupNormalization, ReferenceRefusesMixedTypes) {
  const auto& tactic = tacticNamed(ops::GroupNormalization::cpuTactics(), "reference");
  const Dims x = makeDims({2, 4}), c = makeDims({4});
  EXPECT_MENTIONS(declines(tactic, config(kGN, params(2),
                                          {desc(x, DataType::kHALF), desc(c, DataType::kFLOAT),
                                           desc(c, DataType::kHALF)},
                                          {desc(x, DataType::kHALF)})),
                  "must have X's type");
}

}  // namespace
}  // namespace kiln::testing
