// RMSNormalization: its shape and type rules and their errors, and its CPU tactic against the
// ONNX definition (opset 23) written out here in double precision, on random shapes, axes
// (negative ones too) and broadcast Scale; and fp16/bf16 rows of large activations, where a sum of
// squares taken in fp16 would overflow, staying finite and accurate.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using P = RMSNormalizationParams;
constexpr LayerType kRMS = LayerType::kRMS_NORMALIZATION;

P params(int32_t axis, float epsilon = 1e-5f) {
  P p;
  p.axis = axis;
  p.epsilon = epsilon;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Shape and type rules

TEST(RMSNormalization, ShapeRuleKeepsXsShapeAndType) {
  EXPECT_EQ(inferLayerOk(kRMS, params(-1), {f32({2, 3, 8}), f32({8})}).dims, makeDims({2, 3, 8}));
  EXPECT_EQ(inferLayerOk(kRMS, params(1), {f32({2, 3, 8}), f32({3, 1})}).dims, makeDims({2, 3, 8}));
  EXPECT_EQ(inferLayerOk(kRMS, params(-1), {f32({4, 8}), f32({1, 1, 8})}).dims, makeDims({4, 8}));
  const TensorShape h = inferLayerOk(
      kRMS, params(-2), {typed({2, 4, 6}, DataType::kBF16), typed({4, 6}, DataType::kBF16)});
  EXPECT_EQ(h.type, DataType::kBF16);
}

TEST(RMSNormalization, ShapeRuleSaysWhatIsWrong) {
  EXPECT_MENTIONS(inferLayerError(kRMS, params(3), {f32({2, 3, 8}), f32({8})}),
                  "rms_normalization: axis 3 is outside [-3, 3)");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1), {f32({2, 3, 8}), f32({7})}),
                  "Scale (input 1) [7] does not broadcast to the normalised dims");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1), {f32({2, 3, 8}), f32({3, 8})}),
                  "lies before the axis and must be 1");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(0), {f32({}), f32({})}), "rank >= 1");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1), {typed({2, 8}, DataType::kINT32), f32({8})}),
                  "only fp32, fp16 and bf16");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1), {f32({2, 8}), f32({8}), f32({8})}),
                  "expects 2 inputs");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1, -1.f), {f32({2, 8}), f32({8})}), "epsilon");
  EXPECT_MENTIONS(inferLayerError(kRMS, params(-1, INFINITY), {f32({2, 8}), f32({8})}), "epsilon");
}

TEST(RMSNormalization, TypeRuleComputesFloatsInFp32) {
  std::vector<DataType> types = {DataType::kHALF, DataType::kBF16};
  std::string why;
  ASSERT_TRUE(ops::computeTypes(kRMS, P{}, types, why)) << why;
  for (DataType t : types) EXPECT_EQ(t, DataType::kFLOAT);
  types = {DataType::kINT32, DataType::kFLOAT};
  EXPECT_FALSE(ops::computeTypes(kRMS, P{}, types, why));
  EXPECT_MENTIONS(why, "int32");
}

// ---------------------------------------------------------------------------------------------
// The definition, in double: for each row (an index of X's dims before the axis),
// x / sqrt(mean(x^2) + eps) * scale, Scale indexed by numpy broadcasting against the row's dims.
std::vector<double> definition(const Dims& x, int32_t axis, float eps,
                               const std::vector<double>& xv, const Dims& sd,
                               const std::vector<double>& sv) {
  const int32_t a = axis < 0 ? axis + x.nbDims : axis;
  Dims row;
  row.nbDims = x.nbDims - a;
  for (int32_t i = 0; i < row.nbDims; ++i) row.d[i] = x.d[a + i];
  const int64_t len = volume(row), rows = len == 0 ? 0 : volume(x) / len;
  const std::vector<int64_t> strides = stridesOf(sd);
  std::vector<double> y(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double squares = 0;
    for (int64_t j = 0; j < len; ++j)
      squares += xv[static_cast<size_t>(r * len + j)] * xv[static_cast<size_t>(r * len + j)];
    const double rms = std::sqrt(squares / static_cast<double>(len) + eps);
    for (int64_t j = 0; j < len; ++j) {
      const std::vector<int64_t> coord = unravel(j, row);
      int64_t at = 0;
      for (int32_t i = 0; i < sd.nbDims; ++i) {
        const int32_t k = i - (sd.nbDims - row.nbDims);
        if (k >= 0 && sd.d[i] != 1) at += coord[static_cast<size_t>(k)] * strides[i];
      }
      const size_t e = static_cast<size_t>(r * len + j);
      y[e] = xv[e] / rms * sv[static_cast<size_t>(at)];
    }
  }
  return y;
}

// A Scale shape for rows over x's dims [axis, rank): X.shape[axis:] with some dims made 1, maybe
// the first dropped or a leading 1 added.
Dims scaleDims(Rng& rng, const Dims& x, int32_t axis) {
  Dims p;
  for (int32_t i = axis; i < x.nbDims; ++i)
    p.d[p.nbDims++] = rng.uniformInt(0, 3) == 0 ? 1 : x.d[i];
  const int64_t change = rng.uniformInt(0, 3);
  if (change == 0 && p.nbDims > 1) {
    for (int32_t i = 1; i < p.nbDims; ++i) p.d[i - 1] = p.d[i];
    --p.nbDims;
  } else if (change == 1 && p.nbDims < Dims::kMaxDims) {
    for (int32_t i = p.nbDims; i > 0; --i) p.d[i] = p.d[i - 1];
    p.d[0] = 1;
    ++p.nbDims;
  }
  return p;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(RMSNormalization, ReferenceMatchesTheDefinitionOnRandomProblems) {
  Rng rng;
  for (int trial = 0; trial < 80; ++trial) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims x = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(-rank, rank - 1));
    const int32_t a = axis < 0 ? axis + rank : axis;
    const float eps = rng.coin() ? 1e-5f : rng.uniformFloat(1e-4f, 0.5f);
    const Dims sd = scaleDims(rng, x, a);
    const auto xv = rng.floats(volume(x), -3.f, 3.f);
    const auto sv = rng.floats(volume(sd), -2.f, 2.f);
    const std::string trace = dimsString(x) + " axis " + std::to_string(axis) + " scale " +
                              dimsString(sd) + ", " + rng.trace();
    const auto y =
        runReference(kRMS, &ops::RMSNormalization::infer, params(axis, eps),
                     ops::RMSNormalization::cpuTactics(), {x, sd}, {xv.data(), sv.data()});
    // x / rms is at most sqrt(len) in magnitude and FP32's sum of squares is good to a few ulps.
    expectNearScaled(y, definition(x, axis, eps, widen(xv), sd, widen(sv)), 2e-5, trace);
  }
}

TEST(RMSNormalization, HandComputed) {
  // Row {3, 4}: mean of squares 12.5; with epsilon 3.5 the divisor is 4. Row {0, 0}: zeros.
  const std::vector<float> x = {3, 4, 0, 0}, s = {2, -1};
  expectNearScaled(runReference(kRMS, &ops::RMSNormalization::infer, params(-1, 3.5f),
                                ops::RMSNormalization::cpuTactics(),
                                {makeDims({2, 2}), makeDims({2})}, {x.data(), s.data()}),
                   {1.5, -1.0, 0.0, 0.0}, 1e-7, "mean of squares 12.5, eps 3.5");
  // Axis 0 of [2, 2]: the whole tensor is one row, Scale [2, 1] broadcast over the last dim.
  const std::vector<float> s2 = {1, 10};
  expectNearScaled(runReference(kRMS, &ops::RMSNormalization::infer, params(0, 0.f),
                                ops::RMSNormalization::cpuTactics(),
                                {makeDims({2, 2}), makeDims({2, 1})}, {x.data(), s2.data()}),
                   {3 / std::sqrt(6.25), 4 / std::sqrt(6.25), 0.0, 0.0}, 1e-6, "one row");
}

TEST(RMSNormalization, EmptyTensorsRunAndWriteNothing) {
  for (const Dims& x : {makeDims({0, 4}), makeDims({3, 0})}) {
    const std::vector<float> s(static_cast<size_t>(x.d[1]), 1.f);
    const auto y = runReference(kRMS, &ops::RMSNormalization::infer, params(-1),
                                ops::RMSNormalization::cpuTactics(), {x, makeDims({x.d[1]})},
                                {nullptr, s.data()});
    EXPECT_TRUE(y.empty()) << dimsString(x);
  }
}

// Rows of 1024 values of magnitude ~300: the sum of their squares (~1e8) is far beyond fp16's
// 65504; the kernel, summing in FP32, must stay finite and as accurate as the storage allows.
TEST(RMSNormalization, HalfRowsOfLargeActivationsStayFiniteAndAccurate) {
  Rng rng;
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    const Dims x = makeDims({3, 1024});
    const bool half = t == DataType::kHALF;
    auto toBits = [&](float v) { return half ? floatToHalf(v) : floatToBf16(v); };
    auto fromBits = [&](uint16_t v) { return half ? halfToFloat(v) : bf16ToFloat(v); };
    std::vector<uint16_t> xb, sb;
    std::vector<double> xv, sv;
    for (float v : rng.floats(volume(x), -400.f, 400.f)) {
      xb.push_back(toBits(v));
      xv.push_back(fromBits(xb.back()));
    }
    for (float v : rng.floats(1024, 0.5f, 2.f)) {
      sb.push_back(toBits(v));
      sv.push_back(fromBits(sb.back()));
    }
    const Dims c = makeDims({1024});
    Dims outDims;
    Status st;
    const auto out = runReferenceBytes(
        kRMS, ops::RMSNormalization::cpuTactics(), &ops::RMSNormalization::infer, params(-1),
        {desc(x, t), desc(c, t)}, {xb.data(), sb.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_EQ(outDims, x);
    const auto want = definition(x, -1, 1e-5f, xv, c, sv);
    const double tol = half ? 5e-3 : 4e-2;  // half an output ulp (|y| < 4) and FP32's error
    for (size_t e = 0; e < want.size(); ++e) {
      const double got = readElement(out.data(), t, static_cast<int64_t>(e));
      ASSERT_TRUE(std::isfinite(got)) << dataTypeName(t) << " element " << e;
      ASSERT_NEAR(got, want[e], tol * (1 + std::fabs(want[e])))
          << dataTypeName(t) << " element " << e << ", " << rng.trace();
    }
  }
}

TEST(RMSNormalization, ReferenceRefusesMixedTypes) {
  const auto& tactic = tacticNamed(ops::RMSNormalization::cpuTactics(), "reference");
  const Dims x = makeDims({2, 4}), c = makeDims({4});
  EXPECT_MENTIONS(declines(tactic, config(kRMS, params(-1),
                                          {desc(x, DataType::kHALF), desc(c, DataType::kFLOAT)},
                                          {desc(x, DataType::kHALF)})),
                  "must have X's type");
}

}  // namespace
}  // namespace kiln::testing
