// LayerNormalization: its shape and type rules and their errors, and its CPU tactic against the
// ONNX definition written out here in double precision, on random shapes, axes (negative ones
// too), broadcast Scale/B and no B; and fp16 rows of large activations with a small spread, where
// statistics taken in fp16 would overflow, staying finite and accurate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/thread_pool.h"
#include "kiln/float16.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

using P = LayerNormalizationParams;
constexpr LayerType kLN = LayerType::kLAYER_NORMALIZATION;

P params(int32_t axis, float epsilon = 1e-5f) {
  P p;
  p.axis = axis;
  p.epsilon = epsilon;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Shape and type rules

TEST(LayerNormalization, ShapeRuleKeepsXsShapeAndType) {
  EXPECT_EQ(inferLayerOk(kLN, params(-1), {f32({2, 3, 8}), f32({8}), f32({8})}).dims,
            makeDims({2, 3, 8}));
  EXPECT_EQ(inferLayerOk(kLN, params(1), {f32({2, 3, 8}), f32({3, 8})}).dims, makeDims({2, 3, 8}));
  // Unidirectional broadcasting to X.shape[axis:]: ones, fewer dims, extra leading ones.
  EXPECT_EQ(inferLayerOk(kLN, params(1), {f32({2, 3, 8}), f32({1, 8}), f32({3, 1})}).dims,
            makeDims({2, 3, 8}));
  EXPECT_EQ(inferLayerOk(kLN, params(-1), {f32({4, 8}), f32({1, 1, 8}), f32({1})}).dims,
            makeDims({4, 8}));
  EXPECT_EQ(inferLayerOk(kLN, params(0), {f32({5}), f32({5})}).dims, makeDims({5}));
  const TensorShape h = inferLayerOk(
      kLN, params(-2), {typed({2, 4, 6}, DataType::kHALF), typed({4, 6}, DataType::kHALF)});
  EXPECT_EQ(h.type, DataType::kHALF);
}

TEST(LayerNormalization, ShapeRuleSaysWhatIsWrong) {
  EXPECT_MENTIONS(inferLayerError(kLN, params(3), {f32({2, 3, 8}), f32({8})}),
                  "axis 3 is outside [-3, 3)");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-4), {f32({2, 3, 8}), f32({8})}), "axis -4");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1), {f32({2, 3, 8}), f32({7})}),
                  "Scale (input 1) [7] does not broadcast to the normalised dims");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1), {f32({2, 3, 8}), f32({7})}), "expected 1 or 8");
  EXPECT_MENTIONS(inferLayerError(kLN, params(1), {f32({2, 3, 8}), f32({3, 8}), f32({2, 8})}),
                  "B (input 2)");
  // A dim before the axis would make Scale differ from row to row: not LayerNormalization's.
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1), {f32({2, 3, 8}), f32({3, 8})}),
                  "lies before the axis and must be 1");
  EXPECT_MENTIONS(inferLayerError(kLN, params(0), {f32({}), f32({})}), "rank >= 1");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1), {typed({2, 8}, DataType::kINT32), f32({8})}),
                  "only fp32, fp16 and bf16");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1), {f32({2, 8})}), "expects 2 or 3 inputs");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1, -1.f), {f32({2, 8}), f32({8})}), "epsilon");
  EXPECT_MENTIONS(inferLayerError(kLN, params(-1, NAN), {f32({2, 8}), f32({8})}), "epsilon");
}

TEST(LayerNormalization, TypeRuleComputesFloatsInFp32) {
  std::vector<DataType> types = {DataType::kHALF, DataType::kBF16, DataType::kFLOAT};
  std::string why;
  ASSERT_TRUE(ops::computeTypes(kLN, P{}, types, why)) << why;
  for (DataType t : types) EXPECT_EQ(t, DataType::kFLOAT);
  types = {DataType::kINT64, DataType::kFLOAT};
  EXPECT_FALSE(ops::computeTypes(kLN, P{}, types, why));
  EXPECT_MENTIONS(why, "int64");
}

// ---------------------------------------------------------------------------------------------
// The definition, in double: for each row (an index of X's dims before the axis), mean and biased
// variance of the row, then (x - mean) / sqrt(var + eps) * scale + bias with Scale and B indexed
// by numpy broadcasting of their dims against the row's.
std::vector<double> definition(const Dims& x, int32_t axis, float eps,
                               const std::vector<double>& xv, const Dims& sd,
                               const std::vector<double>& sv, const Dims* bd,
                               const std::vector<double>& bv) {
  const int32_t a = axis < 0 ? axis + x.nbDims : axis;
  Dims row;
  row.nbDims = x.nbDims - a;
  for (int32_t i = 0; i < row.nbDims; ++i) row.d[i] = x.d[a + i];
  const int64_t len = volume(row), rows = len == 0 ? 0 : volume(x) / len;
  auto paramAt = [&](const Dims& p, const std::vector<double>& v, int64_t j) {
    const std::vector<int64_t> coord = unravel(j, row);
    const std::vector<int64_t> strides = stridesOf(p);
    int64_t at = 0;
    for (int32_t i = 0; i < p.nbDims; ++i) {
      const int32_t r = i - (p.nbDims - row.nbDims);
      if (r >= 0 && p.d[i] != 1) at += coord[static_cast<size_t>(r)] * strides[i];
    }
    return v[static_cast<size_t>(at)];
  };
  std::vector<double> y(xv.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += xv[static_cast<size_t>(r * len + j)];
    mean /= static_cast<double>(len);
    for (int64_t j = 0; j < len; ++j) {
      const double d = xv[static_cast<size_t>(r * len + j)] - mean;
      var += d * d;
    }
    var /= static_cast<double>(len);
    for (int64_t j = 0; j < len; ++j) {
      const size_t e = static_cast<size_t>(r * len + j);
      y[e] = (xv[e] - mean) / std::sqrt(var + eps) * paramAt(sd, sv, j) +
             (bd ? paramAt(*bd, bv, j) : 0.0);
    }
  }
  return y;
}

// A Scale/B shape for rows over x's dims [axis, rank): X.shape[axis:], some dims made 1, some
// leading dims dropped or a leading 1 added.
Dims paramDims(Rng& rng, const Dims& x, int32_t axis) {
  Dims p;
  for (int32_t i = axis; i < x.nbDims; ++i)
    p.d[p.nbDims++] = rng.uniformInt(0, 3) == 0 ? 1 : x.d[i];
  const int64_t change = rng.uniformInt(0, 3);
  if (change == 0 && p.nbDims > 1) {  // drop the first dim
    for (int32_t i = 1; i < p.nbDims; ++i) p.d[i - 1] = p.d[i];
    --p.nbDims;
  } else if (change == 1 && p.nbDims < Dims::kMaxDims) {  // a leading 1
    for (int32_t i = p.nbDims; i > 0; --i) p.d[i] = p.d[i - 1];
    p.d[0] = 1;
    ++p.nbDims;
  }
  return p;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// The smallest sqrt(var + eps) over the rows of x (rows from `axis` on), in double.
double smallestSigma(const Dims& x, int32_t axis, float eps, const std::vector<double>& xv) {
  const int32_t a = axis < 0 ? axis + x.nbDims : axis;
  int64_t len = 1;
  for (int32_t i = a; i < x.nbDims; ++i) len *= x.d[i];
  double smallest = std::numeric_limits<double>::infinity();
  for (int64_t r = 0; len > 0 && r < volume(x) / len; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += xv[static_cast<size_t>(r * len + j)];
    mean /= static_cast<double>(len);
    for (int64_t j = 0; j < len; ++j) {
      const double d = xv[static_cast<size_t>(r * len + j)] - mean;
      var += d * d;
    }
    smallest = std::min(smallest, std::sqrt(var / static_cast<double>(len) + eps));
  }
  return smallest;
}

TEST(LayerNormalization, ReferenceMatchesTheDefinitionOnRandomProblems) {
  Rng rng;
  for (int trial = 0; trial < 80; ++trial) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims x = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(-rank, rank - 1));
    const int32_t a = axis < 0 ? axis + rank : axis;
    const float eps = rng.coin() ? 1e-5f : rng.uniformFloat(1e-4f, 0.5f);
    const Dims sd = paramDims(rng, x, a), bd = paramDims(rng, x, a);
    const bool withBias = rng.coin();
    // An offset makes a one-pass variance's cancellation visible.
    const float offset = rng.coin() ? 0.f : 100.f;
    const auto xv = rng.floats(volume(x), offset - 3.f, offset + 3.f);
    const auto sv = rng.floats(volume(sd), -2.f, 2.f), bv = rng.floats(volume(bd));
    const std::string trace = dimsString(x) + " axis " + std::to_string(axis) + " scale " +
                              dimsString(sd) + (withBias ? " bias " + dimsString(bd) : " no bias") +
                              ", " + rng.trace();
    std::vector<Dims> dims = {x, sd};
    std::vector<const void*> data = {xv.data(), sv.data()};
    if (withBias) {
      dims.push_back(bd);
      data.push_back(bv.data());
    }
    const auto y = runReference(kLN, &ops::LayerNormalization::infer, params(axis, eps),
                                ops::LayerNormalization::cpuTactics(), dims, data);
    const auto want =
        definition(x, axis, eps, widen(xv), sd, widen(sv), withBias ? &bd : nullptr, widen(bv));
    // FP32's own limit: the kernel's mean of values near `offset` is good to about an ulp of
    // them, and normalising divides that error by sqrt(var + eps) (a row of two close values
    // near 100 has a tiny one), then multiplies it by |scale| <= 2.
    const double conditioning =
        4 * std::ldexp(1.0, -23) * (offset + 3.0) / smallestSigma(x, axis, eps, widen(xv)) * 2.0;
    expectNearScaled(y, want, 2e-5 + conditioning, trace);
  }
}

TEST(LayerNormalization, HandComputed) {
  // Row {1, 3}: mean 2, variance 1; with epsilon 3 the divisor is 2. Row {5}: y is the bias.
  const std::vector<float> x = {1, 3}, s = {4, 0.5f}, b = {0.5f, -1};
  expectNearScaled(runReference(kLN, &ops::LayerNormalization::infer, params(-1, 3.f),
                                ops::LayerNormalization::cpuTactics(),
                                {makeDims({1, 2}), makeDims({2}), makeDims({2})},
                                {x.data(), s.data(), b.data()}),
                   {-1.5, -0.75}, 1e-7, "mean 2, var 1, eps 3");
  const std::vector<float> one = {5}, s1 = {2}, b1 = {0.25f};
  expectNearScaled(runReference(kLN, &ops::LayerNormalization::infer, params(0),
                                ops::LayerNormalization::cpuTactics(),
                                {makeDims({1}), makeDims({1}), makeDims({1})},
                                {one.data(), s1.data(), b1.data()}),
                   {0.25}, 0, "a row of one element");
}

TEST(LayerNormalization, EmptyTensorsRunAndWriteNothing) {
  for (const Dims& x : {makeDims({0, 4}), makeDims({3, 0})}) {
    const std::vector<float> s(static_cast<size_t>(x.d[1]), 1.f);
    const auto y = runReference(kLN, &ops::LayerNormalization::infer, params(-1),
                                ops::LayerNormalization::cpuTactics(), {x, makeDims({x.d[1]})},
                                {nullptr, s.data()});
    EXPECT_TRUE(y.empty()) << dimsString(x);
  }
}

// Transformer activations: rows of 768 values near 1e4 (fp16's spacing there is 8) with a spread
// of a few tens. In fp16 the sum of the squares overflows (65504) long before the end of the row;
// the kernel, converting to FP32 first, must give finite values as accurate as fp16 can store.
TEST(LayerNormalization, HalfRowsOfLargeActivationsStayFiniteAndAccurate) {
  Rng rng;
  for (DataType t : {DataType::kHALF, DataType::kBF16}) {
    const Dims x = makeDims({3, 768});
    const bool half = t == DataType::kHALF;
    auto toBits = [&](float v) { return half ? floatToHalf(v) : floatToBf16(v); };
    auto fromBits = [&](uint16_t v) { return half ? halfToFloat(v) : bf16ToFloat(v); };
    std::vector<uint16_t> xb, sb, bb;
    std::vector<double> xv, sv, bv;
    for (float v : rng.floats(volume(x), 1e4f - 40.f, 1e4f + 40.f)) {
      xb.push_back(toBits(v));
      xv.push_back(fromBits(xb.back()));
    }
    for (float v : rng.floats(768, 0.5f, 2.f)) {
      sb.push_back(toBits(v));
      sv.push_back(fromBits(sb.back()));
    }
    for (float v : rng.floats(768, -1.f, 1.f)) {
      bb.push_back(toBits(v));
      bv.push_back(fromBits(bb.back()));
    }
    const Dims c = makeDims({768});
    Dims outDims;
    Status st;
    const auto out = runReferenceBytes(
        kLN, ops::LayerNormalization::cpuTactics(), &ops::LayerNormalization::infer, params(-1),
        {desc(x, t), desc(c, t), desc(c, t)}, {xb.data(), sb.data(), bb.data()}, &outDims, &st);
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_EQ(outDims, x);
    const auto want = definition(x, -1, 1e-5f, xv, c, sv, &c, bv);
    // Half an output ulp (|y| < 8: fp16 2^-8, bf16 2^-5) and the FP32 statistics' error.
    const double tol = half ? 5e-3 : 4e-2;
    for (size_t e = 0; e < want.size(); ++e) {
      const double got = readElement(out.data(), t, static_cast<int64_t>(e));
      ASSERT_TRUE(std::isfinite(got)) << dataTypeName(t) << " element " << e;
      ASSERT_NEAR(got, want[e], tol * (1 + std::fabs(want[e])))
          << dataTypeName(t) << " element " << e << ", " << rng.trace();
    }
  }
}

// "split" normalises the rows on the thread pool: bitwise the reference's results, on one thread
// or all, with and without a bias; one row is declined.
TEST(LayerNormalization, SplitIsBitwiseTheReference) {
  const auto& ref = tacticNamed(ops::LayerNormalization::cpuTactics(), "reference");
  const auto& split = tacticNamed(ops::LayerNormalization::cpuTactics(), "split");
  Rng rng;
  const Dims x = makeDims({7, 13, 96}), c = makeDims({96});
  std::vector<float> in(static_cast<size_t>(volume(x))), scale(96), bias(96);
  for (float& v : in) v = rng.uniformFloat(-3.f, 3.f);
  for (float& v : scale) v = rng.uniformFloat(0.5f, 1.5f);
  for (float& v : bias) v = rng.uniformFloat(-1.f, 1.f);
  for (bool withBias : {true, false}) {
    std::vector<PluginTensorDesc> ins = {desc(x), desc(c)};
    if (withBias) ins.push_back(desc(c));
    const KernelConfig cfg = config(kLN, params(-1), ins, {desc(x)});
    auto r = ref.create(cfg, nullptr);
    auto s = split.create(cfg, nullptr);
    ASSERT_TRUE(r && s);
    std::vector<const void*> args = {in.data(), scale.data()};
    if (withBias) args.push_back(bias.data());
    std::vector<float> want(in.size()), got(in.size(), -1.f), one(in.size(), -1.f);
    ASSERT_TRUE(runKernel(*r, args, {want.data()}).isOk());
    ASSERT_TRUE(runKernel(*s, args, {got.data()}).isOk());
    {
      cpu::ScopedThreadLimit limit(1);
      ASSERT_TRUE(runKernel(*s, args, {one.data()}).isOk());
    }
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(one.data(), want.data(), want.size() * sizeof(float)));
  }
  const Dims row = makeDims({1, 96});
  EXPECT_MENTIONS(declines(split, config(kLN, params(-1), {desc(row), desc(c)}, {desc(row)})),
                  "nothing to split");
}

// "vectorized" sums in eight interleaved partial sums: not bitwise the reference, but as close to
// the definition, on rows of every length around its lanes (1 to 40, 768) with and without a
// bias, values offset to make a one-pass variance's cancellation visible; it declines what is
// not its case.
TEST(LayerNormalization, VectorizedMatchesTheDefinition) {
  const auto& fast = tacticNamed(ops::LayerNormalization::cpuTactics(), "vectorized");
  Rng rng;
  for (int64_t len : {1, 2, 7, 8, 9, 15, 16, 17, 40, 768}) {
    for (bool withBias : {true, false}) {
      const Dims x = makeDims({5, len}), c = makeDims({len});
      const float offset = rng.coin() ? 0.f : 100.f;
      const auto xv = rng.floats(volume(x), offset - 3.f, offset + 3.f);
      const auto sv = rng.floats(len, -2.f, 2.f), bv = rng.floats(len);
      std::vector<PluginTensorDesc> ins = {desc(x), desc(c)};
      std::vector<const void*> args = {xv.data(), sv.data()};
      if (withBias) {
        ins.push_back(desc(c));
        args.push_back(bv.data());
      }
      auto kernel = fast.create(config(kLN, params(-1), ins, {desc(x)}), nullptr);
      ASSERT_TRUE(kernel) << len;
      std::vector<float> got(xv.size(), -1.f);
      ASSERT_TRUE(runKernel(*kernel, args, {got.data()}).isOk());
      const auto want =
          definition(x, -1, 1e-5f, widen(xv), c, widen(sv), withBias ? &c : nullptr, widen(bv));
      const double conditioning =
          4 * std::ldexp(1.0, -23) * (offset + 3.0) / smallestSigma(x, -1, 1e-5f, widen(xv)) * 2.0;
      expectNearScaled(
          got, want, 2e-5 + conditioning,
          "len " + std::to_string(len) + (withBias ? " bias" : "") + ", " + rng.trace());
    }
  }
  const Dims x = makeDims({4, 6});
  EXPECT_MENTIONS(
      declines(fast, config(kLN, params(-1), {desc(x), desc(makeDims({1}))}, {desc(x)})),
      "whole row");
  EXPECT_MENTIONS(
      declines(fast, config(kLN, params(-1),
                            {desc(x, DataType::kHALF), desc(makeDims({6}), DataType::kHALF)},
                            {desc(x, DataType::kHALF)})),
      "fp32 only");
}

TEST(LayerNormalization, ReferenceRefusesMixedTypes) {
  const auto& tactic = tacticNamed(ops::LayerNormalization::cpuTactics(), "reference");
  const Dims x = makeDims({2, 4}), c = makeDims({4});
  EXPECT_MENTIONS(declines(tactic, config(kLN, params(-1),
                                          {desc(x, DataType::kHALF), desc(c, DataType::kFLOAT)},
                                          {desc(x, DataType::kHALF)})),
                  "must have X's type");
}

}  // namespace
}  // namespace kiln::testing
