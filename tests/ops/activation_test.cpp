// Activation: its shape rule (types per activation, refusals with useful messages) and its CPU
// tactic: hand-computed cases, random data against the formulas evaluated in double, edge values
// (NaN, infinities, huge inputs), exact integer neg/abs, logical not, and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/cpu/thread_pool.h"
#include "kiln/float16.h"
#include "ops/activation/activation_semantics.h"
#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

// The float activations from elu on, as ints: elu..erf, then (after not) the two GELUs, Mish,
// sin, cos and SiLU.
std::vector<int> floatActivationsFromElu() {
  std::vector<int> v;
  for (int t = static_cast<int>(ActivationType::kELU); t <= static_cast<int>(ActivationType::kERF);
       ++t)
    v.push_back(t);
  v.push_back(static_cast<int>(ActivationType::kGELU));
  v.push_back(static_cast<int>(ActivationType::kGELU_TANH));
  v.push_back(static_cast<int>(ActivationType::kMISH));
  v.push_back(static_cast<int>(ActivationType::kSIN));
  v.push_back(static_cast<int>(ActivationType::kCOS));
  v.push_back(static_cast<int>(ActivationType::kSILU));
  return v;
}

TEST(InferActivation, SameShapeFloatOnly) {
  ActivationParams p;
  p.type = ActivationType::kTANH;
  const TensorShape s = inferOk(ops::Activation::infer, p, {shape({3, 4}, DataType::kHALF)});
  EXPECT_EQ(s.dims, makeDims({3, 4}));
  EXPECT_EQ(s.type, DataType::kHALF);
  inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}, "floating-point");
  inferFails(ops::Activation::infer, p, {shape({3}), shape({3})}, "expects 1 input");
  const int32_t beyond = enumCount(ActivationType{});
  p.type = static_cast<ActivationType>(beyond);
  inferFails(ops::Activation::infer, p, {shape({3})},
             "unknown activation type " + std::to_string(beyond));
}

TEST(InferOnnxActivation, TypesPerActivation) {
  ActivationParams p;
  for (int t : floatActivationsFromElu()) {
    p.type = static_cast<ActivationType>(t);
    const TensorShape s = inferOk(ops::Activation::infer, p, {shape({2, 5}, DataType::kHALF)});
    EXPECT_EQ(s.dims, makeDims({2, 5}));
    EXPECT_EQ(s.type, DataType::kHALF);
    inferFails(ops::Activation::infer, p, {shape({3}, DataType::kBOOL)}, "bool");
  }
  for (ActivationType t : {ActivationType::kNEG, ActivationType::kABS}) {
    p.type = t;
    EXPECT_EQ(inferOk(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}).type,
              DataType::kINT32);
    EXPECT_EQ(inferOk(ops::Activation::infer, p, {shape({3}, DataType::kINT64)}).type,
              DataType::kINT64);
    inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT8)}, "int8");
  }
  p.type = ActivationType::kEXP;
  inferFails(ops::Activation::infer, p, {shape({3}, DataType::kINT32)}, "floating-point");
  p.type = ActivationType::kNOT;
  const TensorShape b = inferOk(ops::Activation::infer, p, {shape({4, 1}, DataType::kBOOL)});
  EXPECT_EQ(b.type, DataType::kBOOL);
  EXPECT_EQ(b.dims, makeDims({4, 1}));
  inferFails(ops::Activation::infer, p, {shape({3})}, "not needs a bool input, got fp32");
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

TEST(Activation, HandComputed) {
  const std::vector<float> x = {-4.f, -1.f, 0.5f, 2.f, 5.f};
  EXPECT_EQ(runActivation(act(ActivationType::kRELU), x),
            (std::vector<float>{0.f, 0.f, 0.5f, 2.f, 5.f}));
  EXPECT_EQ(runActivation(act(ActivationType::kLEAKY_RELU, 0.25f), x),
            (std::vector<float>{-1.f, -0.25f, 0.5f, 2.f, 5.f}));
  EXPECT_EQ(runActivation(act(ActivationType::kCLIP, -1.5f, 2.5f), x),
            (std::vector<float>{-1.5f, -1.f, 0.5f, 2.f, 2.5f}));
  // hard-swish: x * clamp(x + 3, 0, 6) / 6 -> 0, -1*2/6, 0.5*3.5/6, 2*5/6, 5
  const auto hs = runActivation(act(ActivationType::kHARD_SWISH), x);
  const float want[] = {0.f, -1.f / 3.f, 0.5f * 3.5f / 6.f, 10.f / 6.f, 5.f};
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(hs[i], want[i], 1e-6f) << i;
  const auto sg = runActivation(act(ActivationType::kSIGMOID), {0.5f, -200.f, 200.f});
  EXPECT_NEAR(sg[0], 0.6224593312f, 1e-7f);
  EXPECT_EQ(sg[1], 0.f);
  EXPECT_EQ(sg[2], 1.f);
  const auto th = runActivation(act(ActivationType::kTANH), {0.5f, -30.f});
  EXPECT_NEAR(th[0], 0.4621171573f, 1e-7f);
  EXPECT_EQ(th[1], -1.f);
}

TEST(Activation, RandomAgainstDouble) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const auto x = rng.floats(rng.uniformInt(100, 3000), -8.f, 8.f);
  const float alpha = rng.nonZeroFloat(-2.f, 0.f), beta = rng.nonZeroFloat(0.1f, 3.f);
  for (int t = 0; t <= static_cast<int>(ActivationType::kHARD_SWISH); ++t) {
    const auto type = static_cast<ActivationType>(t);
    const auto y = runActivation(act(type, alpha, beta), x);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      double want = 0;
      switch (type) {
        case ActivationType::kRELU:
          want = v > 0 ? v : 0;
          break;
        case ActivationType::kLEAKY_RELU:
          want = v > 0 ? v : alpha * v;
          break;
        case ActivationType::kSIGMOID:
          want = 1 / (1 + std::exp(-v));
          break;
        case ActivationType::kTANH:
          want = std::tanh(v);
          break;
        case ActivationType::kCLIP:
          want = std::min(std::max(v, double{alpha}), double{beta});
          break;
        case ActivationType::kHARD_SWISH:
          want = v * std::min(std::max(v + 3, 0.0), 6.0) / 6;
          break;
        default:  // the others: OnnxActivation.RandomAgainstDouble
          FAIL() << "type " << t << " is not in this loop's range";
      }
      ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << "type " << t << " x=" << x[i];
    }
  }
}

TEST(Activation, NaNPassesThrough) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int t = 0; t <= static_cast<int>(ActivationType::kHARD_SWISH); ++t) {
    const auto y = runActivation(act(static_cast<ActivationType>(t), -1.f, 1.f), {nan});
    EXPECT_TRUE(std::isnan(y[0])) << "type " << t;
  }
}

TEST(Activation, Refusals) {
  const auto& ref = tacticNamed(ops::Activation::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto half = config(LayerType::kACTIVATION, act(ActivationType::kRELU), {desc(d, DataType::kHALF)},
                     {desc(d, DataType::kHALF)});
  EXPECT_NE(declines(ref, half).find("fp16"), std::string::npos);
  auto bad = config(LayerType::kACTIVATION, act(ActivationType::kRELU), {desc(d)},
                    {desc(makeDims({2, 4}))});
  declines(ref, bad);
  const Dims d4 = makeDims({1, 2, 2, 2});
  auto cl = config(LayerType::kACTIVATION, act(ActivationType::kRELU),
                   {desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
                   {desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  declines(ref, cl);
  auto unknown =
      config(LayerType::kACTIVATION, act(static_cast<ActivationType>(40)), {desc(d)}, {desc(d)});
  declines(ref, unknown);
}

// "split" runs the reference's loop over chunks on the thread pool: bitwise its results, on one
// thread or all, for a size that is not a multiple of the chunk; too small a tensor is declined.
TEST(Activation, SplitIsBitwiseTheReference) {
  const auto& ref = tacticNamed(ops::Activation::cpuTactics(), "reference");
  const auto& split = tacticNamed(ops::Activation::cpuTactics(), "split");
  Rng rng;
  const Dims d = makeDims({3, 17, 1001});  // 51051 elements: three chunks and a bit
  std::vector<float> x(static_cast<size_t>(volume(d)));
  for (float& v : x) v = rng.uniformFloat(-4.f, 4.f);
  for (ActivationType t :
       {ActivationType::kGELU, ActivationType::kSIGMOID, ActivationType::kRELU}) {
    const KernelConfig c = config(LayerType::kACTIVATION, act(t), {desc(d)}, {desc(d)});
    auto r = ref.create(c, nullptr);
    auto s = split.create(c, nullptr);
    ASSERT_TRUE(r && s);
    std::vector<float> want(x.size()), got(x.size(), -1.f), one(x.size(), -1.f);
    ASSERT_TRUE(runKernel(*r, {x.data()}, {want.data()}).isOk());
    ASSERT_TRUE(runKernel(*s, {x.data()}, {got.data()}).isOk());
    {
      cpu::ScopedThreadLimit limit(1);
      ASSERT_TRUE(runKernel(*s, {x.data()}, {one.data()}).isOk());
    }
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float))) << int(t);
    EXPECT_EQ(0, std::memcmp(one.data(), want.data(), want.size() * sizeof(float))) << int(t);
  }
  const Dims small = makeDims({2, 3});
  EXPECT_MENTIONS(declines(split, config(LayerType::kACTIVATION, act(ActivationType::kRELU),
                                         {desc(small)}, {desc(small)})),
                  "nothing to split");
}

// The position of a 16-bit float pattern on the number line: neighbours differ by 1, and -0 and
// +0 are both 0.
int32_t ordinal16(uint16_t bits) {
  const int32_t magnitude = bits & 0x7fff;
  return (bits & 0x8000) ? -magnitude : magnitude;
}

// geluForHalfResult, the CUDA kernels' erf GELU for FP16 and BF16 results, over every finite input
// of both types: once rounded, within one unit in the last place of the exact GELU (double, from
// erfc so that the negative tail keeps its digits), or within the formula's absolute bound.
// Specials follow the erff form: +inf stays inf, -inf and NaN give NaN. On the GPU the reciprocal
// and exp2 are the hardware's approximations, a few float ulps from these; the op harness compares
// that kernel with the CPU reference.
TEST(Activation, HalfResultGeluIsWithinAnUlpOfTheExactValueOnEveryInput) {
  struct Type {
    const char* name;
    float (*toFloat)(uint16_t);
    uint16_t (*fromFloat)(float);
  };
  for (const Type& t :
       {Type{"fp16", &halfToFloat, &floatToHalf}, Type{"bf16", &bf16ToFloat, &floatToBf16}}) {
    int inexact = 0;
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const float x = t.toFloat(static_cast<uint16_t>(bits));
      const float got = ops::activation::geluForHalfResult(x);
      if (!std::isfinite(x)) {
        const float erfForm = ops::activation::activate<ActivationType::kGELU>(x, 0.f, 0.f);
        EXPECT_TRUE(std::isnan(got) ? std::isnan(erfForm) : got == erfForm) << t.name << " " << x;
        continue;
      }
      const double exact = 0.5 * x * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
      const int ulps =
          std::abs(ordinal16(t.fromFloat(got)) - ordinal16(t.fromFloat(static_cast<float>(exact))));
      // Past x = -4.7 (BF16 only; FP16 rounds those to 0) the formula's absolute error, at most
      // 1.5e-7 * |x| / 2, can be more than an ulp of the tiny result; the erff form gives 0 there.
      const bool farTail = std::fabs(got - exact) <= 0.75e-7 * std::fabs(x);
      ASSERT_TRUE(ulps <= 1 || farTail)
          << t.name << " x = " << x << ": got " << got << ", exact " << exact;
      inexact += ulps != 0;
    }
    // Most inputs round to the same value; a formula a bit off would move thousands.
    EXPECT_LT(inexact, 1000) << t.name << ": " << inexact << " inputs one ulp away";
  }
}

// ---------------------------------------------------------------------------------------------
// The ONNX activations

// The documented formulas, in double.
double expectedActivation(ActivationType t, double v, double alpha, double beta) {
  switch (t) {
    case ActivationType::kELU:
      return v < 0 ? alpha * (std::exp(v) - 1) : v;
    case ActivationType::kSELU:
      return beta * (v <= 0 ? alpha * (std::exp(v) - 1) : v);
    case ActivationType::kSOFTPLUS:
      return std::log(1 + std::exp(v));
    case ActivationType::kHARD_SIGMOID:
      return std::max(0.0, std::min(1.0, alpha * v + beta));
    case ActivationType::kEXP:
      return std::exp(v);
    case ActivationType::kLOG:
      return std::log(v);
    case ActivationType::kSQRT:
      return std::sqrt(v);
    case ActivationType::kNEG:
      return -v;
    case ActivationType::kABS:
      return std::fabs(v);
    case ActivationType::kRECIPROCAL:
      return 1 / v;
    case ActivationType::kERF:
      return std::erf(v);
    case ActivationType::kGELU:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case ActivationType::kGELU_TANH:
      return 0.5 * v *
             (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    case ActivationType::kMISH:
      return v * std::tanh(std::log(1 + std::exp(v)));
    case ActivationType::kSIN:
      return std::sin(v);
    case ActivationType::kCOS:
      return std::cos(v);
    case ActivationType::kSILU:
      return v / (1 + std::exp(-v));
    default:
      ADD_FAILURE() << "no formula for type " << static_cast<int>(t);
      return 0;
  }
}

TEST(OnnxActivation, RandomAgainstDouble) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const auto x = rng.floats(rng.uniformInt(100, 2000), -8.f, 8.f);
  const float alpha = rng.nonZeroFloat(0.1f, 2.f), beta = rng.nonZeroFloat(0.1f, 3.f);
  for (int t : floatActivationsFromElu()) {
    const auto type = static_cast<ActivationType>(t);
    const auto y = runActivation(act(type, alpha, beta), x);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = expectedActivation(type, x[i], alpha, beta);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(y[i])) << "type " << t << " x=" << x[i] << " got " << y[i];
        continue;
      }
      ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << "type " << t << " x=" << x[i];
    }
  }
}

TEST(OnnxActivation, HandComputedAndEdges) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // ONNX's Selu defaults: alpha 1.67326..., gamma 1.0507...
  const auto selu = runActivation(act(ActivationType::kSELU, 1.67326319f, 1.05070102f),
                                  std::vector<float>{-1.f, 0.f, 1.f});
  EXPECT_NEAR(selu[0], -1.11133075f, 1e-6f);
  EXPECT_EQ(selu[1], 0.f);
  EXPECT_NEAR(selu[2], 1.05070102f, 1e-7f);
  // softplus stays finite where exp(x) overflows, and goes to 0 where it underflows.
  const auto sp = runActivation(act(ActivationType::kSOFTPLUS), std::vector<float>{200.f, -200.f});
  EXPECT_EQ(sp[0], 200.f);
  EXPECT_EQ(sp[1], 0.f);
  const auto hs = runActivation(act(ActivationType::kHARD_SIGMOID, 0.2f, 0.5f),
                                std::vector<float>{-3.f, 1.f, 3.f});
  EXPECT_EQ(hs[0], 0.f);
  EXPECT_NEAR(hs[1], 0.7f, 1e-7f);
  EXPECT_EQ(hs[2], 1.f);
  const auto lg = runActivation(act(ActivationType::kLOG), std::vector<float>{0.f, -1.f, inf});
  EXPECT_EQ(lg[0], -inf);
  EXPECT_TRUE(std::isnan(lg[1]));
  EXPECT_EQ(lg[2], inf);
  const auto rc = runActivation(act(ActivationType::kRECIPROCAL), std::vector<float>{0.f, -4.f});
  EXPECT_EQ(rc[0], inf);
  EXPECT_EQ(rc[1], -0.25f);
  // mish: x where softplus(x) saturates tanh, 0 where it underflows, and (x * tanh(log1p(exp(x)))
  // in double) mish(1) = 0.86509839, mish(-1) = -0.30340146.
  const auto mish = runActivation(act(ActivationType::kMISH),
                                  std::vector<float>{200.f, -200.f, 1.f, -1.f, inf, -inf});
  EXPECT_EQ(mish[0], 200.f);
  EXPECT_EQ(mish[1], 0.f);
  EXPECT_NEAR(mish[2], 0.86509839f, 1e-7f);
  EXPECT_NEAR(mish[3], -0.30340146f, 1e-7f);
  EXPECT_EQ(mish[4], inf);
  EXPECT_TRUE(std::isnan(mish[5]));  // -inf * tanh(0), as in IEEE double
  for (int t : floatActivationsFromElu()) {
    const auto y =
        runActivation(act(static_cast<ActivationType>(t), 1.f, 1.f), std::vector<float>{nan});
    EXPECT_TRUE(std::isnan(y[0])) << "type " << t;
  }
}

template <class T>
void checkIntegerNegAbs(Rng& rng) {
  std::vector<T> x(static_cast<size_t>(rng.uniformInt(50, 500)));
  for (auto& v : x) v = static_cast<T>(rng.nonZeroInt(-1000000, 1000000));
  x[0] = std::numeric_limits<T>::min();  // wraps to itself, as in numpy
  x[1] = std::numeric_limits<T>::max();
  const auto neg = runActivation(act(ActivationType::kNEG), x);
  const auto abs = runActivation(act(ActivationType::kABS), x);
  EXPECT_EQ(neg[0], std::numeric_limits<T>::min());
  EXPECT_EQ(abs[0], std::numeric_limits<T>::min());
  for (size_t i = 1; i < x.size(); ++i) {
    ASSERT_EQ(neg[i], -x[i]) << i;
    ASSERT_EQ(abs[i], x[i] < 0 ? -x[i] : x[i]) << i;
  }
}

TEST(OnnxActivation, IntegerNegAbs) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  checkIntegerNegAbs<int32_t>(rng);
  checkIntegerNegAbs<int64_t>(rng);
}

TEST(OnnxActivation, LogicalNot) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  std::vector<uint8_t> x(static_cast<size_t>(rng.uniformInt(10, 300)));
  for (auto& v : x) v = static_cast<uint8_t>(rng.uniformInt(0, 1));
  x[0] = 0;
  x[1] = 1;
  const auto y = runActivation(act(ActivationType::kNOT), x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i] ? 0 : 1) << i;
}

TEST(OnnxActivation, Refusals) {
  const auto& ref = tacticNamed(ops::Activation::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  // Exact on integers only where the kernel exists: exp on int32 is refused by inference.
  auto i32 = config(LayerType::kACTIVATION, act(ActivationType::kEXP), {desc(d, DataType::kINT32)},
                    {desc(d, DataType::kINT32)});
  declines(ref, i32);
  auto neg16 = config(LayerType::kACTIVATION, act(ActivationType::kNEG), {desc(d, DataType::kHALF)},
                      {desc(d, DataType::kHALF)});
  EXPECT_NE(declines(ref, neg16).find("fp16"), std::string::npos);
  // not gives bool; a plan that claims fp32 is refused.
  auto notBad = config(LayerType::kACTIVATION, act(ActivationType::kNOT),
                       {desc(d, DataType::kBOOL)}, {desc(d)});
  declines(ref, notBad);
}

}  // namespace
}  // namespace kiln::testing
