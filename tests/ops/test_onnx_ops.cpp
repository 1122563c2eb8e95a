// Kernels of the ONNX-coverage additions: new activations, comparisons, prelu, log-softmax,
// argmax and select. Each against a hand-written loop on fresh random data, plus hand-computed
// and edge cases, and refusals.
#include <gtest/gtest.h>

#include <limits>
#include <type_traits>

#include "ops/op.h"
#include "ops/op_table.h"
#include "ops/op_test_util.h"

namespace kiln {
namespace {

using test::act;
using test::Rng;
using test::runActivation;
using test::typeOf;

// Index into an input of dims `in` for output element `index` under numpy broadcasting.
int64_t broadcastIndex(int64_t index, const Dims& out, const Dims& in) {
  const auto c = test::unravel(index, out);
  const auto s = test::stridesOf(in);
  int64_t r = 0;
  for (int32_t k = 0; k < in.nbDims; ++k)
    if (in.d[k] != 1)
      r += c[static_cast<size_t>(k + out.nbDims - in.nbDims)] * s[static_cast<size_t>(k)];
  return r;
}

// Dims that broadcast to `full`: a suffix of it with random dims replaced by 1.
Dims broadcastableTo(Rng& rng, const Dims& full) {
  Dims d;
  d.nbDims = static_cast<int32_t>(rng.uniformInt(0, full.nbDims));
  for (int32_t i = 0; i < d.nbDims; ++i)
    d.d[i] = rng.uniformInt(0, 2) == 0 ? 1 : full.d[i + full.nbDims - d.nbDims];
  return d;
}

// ---------------------------------------------------------------------------------------------
// Activations

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
  for (int t = static_cast<int>(ActivationType::kELU); t <= static_cast<int>(ActivationType::kERF);
       ++t) {
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
  for (int t = static_cast<int>(ActivationType::kELU); t <= static_cast<int>(ActivationType::kERF);
       ++t) {
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
  const auto& ref = test::tacticNamed(ops::Activation::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  // Exact on integers only where the kernel exists: exp on int32 is refused by inference.
  auto i32 = test::config(LayerType::kACTIVATION, act(ActivationType::kEXP),
                          {test::desc(d, DataType::kINT32)}, {test::desc(d, DataType::kINT32)});
  test::declines(ref, i32);
  auto neg16 = test::config(LayerType::kACTIVATION, act(ActivationType::kNEG),
                            {test::desc(d, DataType::kHALF)}, {test::desc(d, DataType::kHALF)});
  EXPECT_NE(test::declines(ref, neg16).find("fp16"), std::string::npos);
  // not gives bool; a plan that claims fp32 is refused.
  auto notBad = test::config(LayerType::kACTIVATION, act(ActivationType::kNOT),
                             {test::desc(d, DataType::kBOOL)}, {test::desc(d)});
  test::declines(ref, notBad);
}

// ---------------------------------------------------------------------------------------------
// Comparisons and prelu

template <class T>
uint8_t expectedCompare(ElementwiseOp op, T a, T b) {
  if constexpr (std::is_same_v<T, uint8_t>) return (a != 0) == (b != 0);
  switch (op) {
    case ElementwiseOp::kEQUAL:
      return a == b;
    case ElementwiseOp::kLESS:
      return a < b;
    default:
      return a > b;
  }
}

template <class T>
std::vector<T> compareValues(Rng& rng, int64_t n) {
  // A narrow range so that equal values occur often.
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_same_v<T, uint8_t>)
      x = static_cast<uint8_t>(rng.uniformInt(0, 1));
    else
      x = static_cast<T>(rng.nonZeroInt(-3, 3));
  }
  return v;
}

// Every elementwise tactic must accept exactly the shapes it is made for and match the loop.
template <class In, class Out, class Expect>
void checkTactics(const ElementwiseParams& p, const Dims& da, const Dims& db,
                  const std::vector<In>& a, const std::vector<In>& b, Expect expect) {
  std::vector<PluginTensorDesc> in = {test::desc(da, typeOf<In>()), test::desc(db, typeOf<In>())};
  auto cfg = test::config(LayerType::kELEMENTWISE, p, in,
                          test::inferredOutputs(ops::Elementwise::infer, p, in));
  if (cfg.outputs.empty()) return;
  const Dims dout = cfg.outputs[0].dims;
  std::vector<Out> want(static_cast<size_t>(volume(dout)));
  for (int64_t i = 0; i < volume(dout); ++i)
    want[static_cast<size_t>(i)] = expect(a[static_cast<size_t>(broadcastIndex(i, dout, da))],
                                          b[static_cast<size_t>(broadcastIndex(i, dout, db))]);
  const bool noBroadcast = volume(da) == volume(dout) && volume(db) == volume(dout);
  const bool scalar = (volume(da) == 1 && volume(db) == volume(dout)) ||
                      (volume(db) == 1 && volume(da) == volume(dout));
  for (const Tactic& t : ops::Elementwise::cpuTactics()) {
    std::string why;
    auto k = t.create(cfg, &why);
    const std::string name = t.name;
    const bool shouldAccept = name == "reference" || (name == "same_shape" && noBroadcast) ||
                              (name == "scalar_broadcast" && scalar);
    ASSERT_EQ(static_cast<bool>(k), shouldAccept) << name << ": " << why;
    if (!k) continue;
    std::vector<Out> got(want.size(), Out{7});
    ASSERT_TRUE(test::runKernel(*k, {a.data(), b.data()}, {got.data()}).isOk());
    for (size_t i = 0; i < want.size(); ++i) {
      if constexpr (std::is_floating_point_v<Out>) {
        ASSERT_TRUE(test::sameFloat(got[i], want[i]))
            << name << " [" << i << "]: " << got[i] << " vs " << want[i];
      } else {
        ASSERT_EQ(+got[i], +want[i]) << name << " [" << i << "]";
      }
    }
  }
}

template <class T>
void checkComparisons(Rng& rng, int rounds) {
  SCOPED_TRACE(rng.trace());
  for (ElementwiseOp op : {ElementwiseOp::kEQUAL, ElementwiseOp::kLESS, ElementwiseOp::kGREATER}) {
    if (std::is_same_v<T, uint8_t> && op != ElementwiseOp::kEQUAL) continue;
    for (int round = 0; round < rounds; ++round) {
      const Dims full = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 4)), 5);
      Dims da = full, db = full;
      if (round % 3 == 1) db = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 2)), 1);
      if (round % 3 == 2) {
        da = broadcastableTo(rng, full);
        db = broadcastableTo(rng, full);
      }
      if (rng.uniformInt(0, 1)) std::swap(da, db);
      SCOPED_TRACE("op " + std::to_string(static_cast<int>(op)) + " round " +
                   std::to_string(round));
      const auto a = compareValues<T>(rng, volume(da));
      const auto b = compareValues<T>(rng, volume(db));
      checkTactics<T, uint8_t>(ElementwiseParams{op}, da, db, a, b,
                               [op](T x, T y) { return expectedCompare(op, x, y); });
    }
  }
}

TEST(OnnxElementwise, ComparisonsMatchLoopFp32) {
  Rng rng;
  checkComparisons<float>(rng, 12);
}
TEST(OnnxElementwise, ComparisonsMatchLoopInt32) {
  Rng rng;
  checkComparisons<int32_t>(rng, 9);
}
TEST(OnnxElementwise, ComparisonsMatchLoopInt64) {
  Rng rng;
  checkComparisons<int64_t>(rng, 9);
}
TEST(OnnxElementwise, EqualMatchesLoopBool) {
  Rng rng;
  checkComparisons<uint8_t>(rng, 9);
}

TEST(OnnxElementwise, ComparisonsWithNaNAreFalse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {nan, 1.f, nan}, b = {1.f, nan, nan};
  for (ElementwiseOp op : {ElementwiseOp::kEQUAL, ElementwiseOp::kLESS, ElementwiseOp::kGREATER})
    checkTactics<float, uint8_t>(ElementwiseParams{op}, makeDims({3}), makeDims({3}), a, b,
                                 [](float, float) { return uint8_t{0}; });
  // Any non-zero bool byte is true.
  const std::vector<uint8_t> x = {2, 0, 1}, y = {1, 0, 0};
  checkTactics<uint8_t, uint8_t>(
      ElementwiseParams{ElementwiseOp::kEQUAL}, makeDims({3}), makeDims({3}), x, y,
      [](uint8_t p, uint8_t q) { return static_cast<uint8_t>((p != 0) == (q != 0)); });
}

TEST(OnnxElementwise, PreluMatchesLoop) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 15; ++round) {
    const Dims da = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 4)), 5);
    Dims db = round % 3 == 0 ? da : broadcastableTo(rng, da);
    if (round % 3 == 1) db = makeDims({});
    const auto a = rng.floats(volume(da), -5.f, 5.f);
    const auto b = rng.floats(volume(db), -2.f, 2.f);
    SCOPED_TRACE("round " + std::to_string(round));
    checkTactics<float, float>(ElementwiseParams{ElementwiseOp::kPRELU}, da, db, a, b,
                               [](float x, float s) { return x < 0 ? x * s : x; });
  }
}

TEST(OnnxElementwise, Refusals) {
  const auto& ref = test::tacticNamed(ops::Elementwise::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto make = [&](ElementwiseOp op, DataType in, DataType out) {
    return test::config(LayerType::kELEMENTWISE, ElementwiseParams{op},
                        {test::desc(d, in), test::desc(d, in)}, {test::desc(d, out)});
  };
  // A corrupted plan: a comparison claiming an fp32 output.
  for (const Tactic& t : ops::Elementwise::cpuTactics())
    test::declines(t, make(ElementwiseOp::kLESS, DataType::kFLOAT, DataType::kFLOAT));
  test::declines(ref, make(ElementwiseOp::kLESS, DataType::kBOOL, DataType::kBOOL));
  EXPECT_NE(test::declines(ref, make(ElementwiseOp::kEQUAL, DataType::kHALF, DataType::kBOOL))
                .find("fp16"),
            std::string::npos);
  test::declines(ref, make(ElementwiseOp::kPRELU, DataType::kINT32, DataType::kINT32));
}

// ---------------------------------------------------------------------------------------------
// Log-softmax

std::vector<float> runLogSoftmax(int32_t axis, const Dims& d, const std::vector<float>& x) {
  SoftmaxParams p;
  p.axis = axis;
  p.log = true;
  auto cfg = test::config(LayerType::kSOFTMAX, p, {test::desc(d)}, {test::desc(d)});
  auto k = test::create(test::tacticNamed(ops::Softmax::cpuTactics(), "reference"), cfg);
  std::vector<float> y(x.size(), 123.f);
  if (k) {
    EXPECT_TRUE(test::runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

TEST(OnnxLogSoftmax, RandomShapesAndAxes) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 15; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims d = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(-rank, rank - 1));
    const int32_t a = axis < 0 ? axis + rank : axis;
    const auto x = rng.floats(volume(d), -20.f, 20.f);
    const auto y = runLogSoftmax(axis, d, x);
    const int64_t step = test::stridesOf(d)[static_cast<size_t>(a)];
    for (int64_t i = 0; i < volume(d); ++i) {
      const auto c = test::unravel(i, d);
      const int64_t first = i - c[static_cast<size_t>(a)] * step;
      double sum = 0;
      for (int64_t k = 0; k < d.d[a]; ++k)
        sum += std::exp(double{x[static_cast<size_t>(first + k * step)]});
      const double want = x[static_cast<size_t>(i)] - std::log(sum);
      ASSERT_NEAR(y[static_cast<size_t>(i)], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << "round " << round << " axis " << axis << " element " << i;
    }
  }
}

TEST(OnnxLogSoftmax, StableOnHugeAndInfiniteInputs) {
  const float inf = std::numeric_limits<float>::infinity();
  // Plain log(softmax) would give log(0) = -inf for the small entries; these stay finite.
  const auto y = runLogSoftmax(0, makeDims({3}), {1000.f, 0.f, -1000.f});
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[1], -1000.f);
  EXPECT_EQ(y[2], -2000.f);
  const auto h = runLogSoftmax(0, makeDims({2}), {1e30f, 1e30f});
  EXPECT_NEAR(h[0], -0.69314718f, 1e-7f);
  EXPECT_NEAR(h[1], -0.69314718f, 1e-7f);
  const auto e = runLogSoftmax(0, makeDims({2}), {-inf, 2.f});
  EXPECT_EQ(e[0], -inf);
  EXPECT_EQ(e[1], 0.f);
  const auto n = runLogSoftmax(0, makeDims({2}), {std::numeric_limits<float>::quiet_NaN(), 1.f});
  EXPECT_TRUE(std::isnan(n[0]) && std::isnan(n[1]));
}

// ---------------------------------------------------------------------------------------------
// Argmax

template <class T>
std::vector<int64_t> runArgMax(int32_t axis, bool keep, const Dims& d, const std::vector<T>& x,
                               Dims* outDims = nullptr) {
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 1u << axis;
  p.keepDims = keep;
  const std::vector<PluginTensorDesc> in = {test::desc(d, typeOf<T>())};
  auto cfg =
      test::config(LayerType::kREDUCE, p, in, test::inferredOutputs(ops::Reduce::infer, p, in));
  if (cfg.outputs.empty()) return {};
  if (outDims) *outDims = cfg.outputs[0].dims;
  auto k = test::create(test::tacticNamed(ops::Reduce::cpuTactics(), "reference"), cfg);
  std::vector<int64_t> y(static_cast<size_t>(volume(cfg.outputs[0].dims)), -7);
  if (k) {
    EXPECT_TRUE(test::runKernel(*k, {x.data()}, {y.data()}).isOk());
  }
  return y;
}

template <class T>
void checkArgMax(Rng& rng) {
  SCOPED_TRACE(rng.trace());
  for (int round = 0; round < 15; ++round) {
    const int32_t rank = static_cast<int32_t>(rng.uniformInt(1, 4));
    const Dims d = rng.dims(rank, 6);
    const int32_t axis = static_cast<int32_t>(rng.uniformInt(0, rank - 1));
    const bool keep = rng.uniformInt(0, 1);
    // Few distinct values, so that ties (first index wins) are common.
    std::vector<T> x(static_cast<size_t>(volume(d)));
    for (auto& v : x) v = static_cast<T>(rng.nonZeroInt(-4, 4));
    Dims od;
    const auto y = runArgMax(axis, keep, d, x, &od);
    Dims kept = d;
    kept.d[axis] = 1;
    ASSERT_EQ(od.nbDims, keep ? rank : rank - 1);
    ASSERT_EQ(volume(od), volume(kept));
    const int64_t step = test::stridesOf(d)[static_cast<size_t>(axis)];
    for (int64_t o = 0; o < volume(kept); ++o) {
      const auto c = test::unravel(o, kept);
      int64_t first = 0;
      const auto s = test::stridesOf(d);
      for (int32_t k = 0; k < rank; ++k)
        first += c[static_cast<size_t>(k)] * s[static_cast<size_t>(k)];
      int64_t best = 0;
      for (int64_t k = 1; k < d.d[axis]; ++k)
        if (x[static_cast<size_t>(first + k * step)] > x[static_cast<size_t>(first + best * step)])
          best = k;
      ASSERT_EQ(y[static_cast<size_t>(o)], best) << "round " << round << " output " << o;
    }
  }
}

TEST(OnnxArgMax, RandomFp32) {
  Rng rng;
  checkArgMax<float>(rng);
}
TEST(OnnxArgMax, RandomInt32) {
  Rng rng;
  checkArgMax<int32_t>(rng);
}
TEST(OnnxArgMax, RandomInt64) {
  Rng rng;
  checkArgMax<int64_t>(rng);
}

TEST(OnnxArgMax, HandComputedAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // [[2, 7, 7], [9, -1, 9]]
  const std::vector<float> x = {2.f, 7.f, 7.f, 9.f, -1.f, 9.f};
  EXPECT_EQ(runArgMax<float>(1, false, makeDims({2, 3}), x), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(runArgMax<float>(0, true, makeDims({2, 3}), x), (std::vector<int64_t>{1, 0, 1}));
  // The first NaN wins (numpy's argmax), even over +inf.
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({4}), {inf, 1.f, nan, nan}),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({2}), {nan, inf}), (std::vector<int64_t>{0}));
  EXPECT_EQ(runArgMax<float>(0, false, makeDims({3}), {-inf, -inf, -inf}),
            (std::vector<int64_t>{0}));
  // int64 values beyond fp32's exact range compare exactly.
  const int64_t big = (int64_t{1} << 40) + 1;
  EXPECT_EQ(runArgMax<int64_t>(0, false, makeDims({2}), {big - 1, big}), (std::vector<int64_t>{1}));
  // An empty output is fine.
  EXPECT_TRUE(runArgMax<float>(1, false, makeDims({0, 3}), {}).empty());
}

TEST(OnnxArgMax, Refusals) {
  const auto& ref = test::tacticNamed(ops::Reduce::cpuTactics(), "reference");
  ReduceParams p;
  p.op = ReduceOp::kARGMAX;
  p.axesMask = 0b1;
  const Dims d = makeDims({4, 3});
  // A plan that claims fp32 indices, or two axes, is refused.
  test::declines(
      ref, test::config(LayerType::kREDUCE, p, {test::desc(d)}, {test::desc(makeDims({1, 3}))}));
  p.axesMask = 0b11;
  test::declines(ref, test::config(LayerType::kREDUCE, p, {test::desc(d)},
                                   {test::desc(makeDims({1, 1}), DataType::kINT64)}));
  p.axesMask = 0b1;
  EXPECT_NE(
      test::declines(ref, test::config(LayerType::kREDUCE, p, {test::desc(d, DataType::kHALF)},
                                       {test::desc(makeDims({1, 3}), DataType::kINT64)}))
          .find("fp16"),
      std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Select

// Runs select on raw bytes of elements of `elemSize` bytes and checks it against the loop.
void checkSelect(Rng& rng, DataType type, const Dims& dc, const Dims& dx, const Dims& dy) {
  const std::vector<PluginTensorDesc> in = {test::desc(dc, DataType::kBOOL), test::desc(dx, type),
                                            test::desc(dy, type)};
  auto cfg = test::config(LayerType::kSELECT, SelectParams{}, in,
                          test::inferredOutputs(ops::Select::infer, SelectParams{}, in));
  ASSERT_EQ(cfg.outputs.size(), 1u);
  const Dims dout = cfg.outputs[0].dims;
  const size_t es = dataTypeSize(type);
  std::vector<uint8_t> c(static_cast<size_t>(volume(dc)));
  for (auto& v : c) v = static_cast<uint8_t>(rng.uniformInt(0, 1));
  const auto x = rng.bytes(volume(dx) * static_cast<int64_t>(es));
  const auto y = rng.bytes(volume(dy) * static_cast<int64_t>(es));
  auto k = test::create(test::tacticNamed(ops::Select::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  std::vector<uint8_t> got(static_cast<size_t>(volume(dout)) * es, 0);
  ASSERT_TRUE(test::runKernel(*k, {c.data(), x.data(), y.data()}, {got.data()}).isOk());
  for (int64_t i = 0; i < volume(dout); ++i) {
    const bool pick = c[static_cast<size_t>(broadcastIndex(i, dout, dc))] != 0;
    const uint8_t* src = pick ? x.data() + broadcastIndex(i, dout, dx) * es
                              : y.data() + broadcastIndex(i, dout, dy) * es;
    ASSERT_EQ(std::memcmp(got.data() + i * es, src, es), 0)
        << "element " << i << " of " << test::unravel(i, dout).size() << "-d output";
  }
}

TEST(OnnxSelect, RandomBroadcastingAnyType) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  const DataType types[] = {DataType::kFLOAT, DataType::kHALF,  DataType::kINT8,
                            DataType::kINT32, DataType::kINT64, DataType::kBOOL};
  for (int round = 0; round < 30; ++round) {
    const Dims full = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 5)), 4);
    Dims dc = full, dx = full, dy = full;
    if (round % 2) {
      dc = broadcastableTo(rng, full);
      dx = broadcastableTo(rng, full);
      dy = broadcastableTo(rng, full);
    }
    SCOPED_TRACE("round " + std::to_string(round));
    checkSelect(rng, types[round % 6], dc, dx, dy);
  }
}

TEST(OnnxSelect, HandComputedAndNonZeroConditionBytes) {
  // Where([[1],[0]] (any non-zero is true), [1, 2, 3], 9) -> [[1, 2, 3], [9, 9, 9]]
  const std::vector<PluginTensorDesc> in = {test::desc(makeDims({2, 1}), DataType::kBOOL),
                                            test::desc(makeDims({3})), test::desc(makeDims({}))};
  auto cfg = test::config(LayerType::kSELECT, SelectParams{}, in,
                          test::inferredOutputs(ops::Select::infer, SelectParams{}, in));
  auto k = test::create(test::tacticNamed(ops::Select::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const std::vector<uint8_t> c = {5, 0};
  const std::vector<float> x = {1.f, 2.f, 3.f}, y = {9.f};
  std::vector<float> out(6, -1.f);
  ASSERT_TRUE(test::runKernel(*k, {c.data(), x.data(), y.data()}, {out.data()}).isOk());
  EXPECT_EQ(out, (std::vector<float>{1.f, 2.f, 3.f, 9.f, 9.f, 9.f}));
}

TEST(OnnxSelect, Refusals) {
  const auto& ref = test::tacticNamed(ops::Select::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto good = [&] {
    return test::config(LayerType::kSELECT, SelectParams{},
                        {test::desc(d, DataType::kBOOL), test::desc(d), test::desc(d)},
                        {test::desc(d)});
  };
  test::create(ref, good());
  auto bad = good();
  bad.outputs[0].dims = makeDims({3, 3});
  EXPECT_NE(test::declines(ref, bad).find("[3,3]"), std::string::npos);
  bad = good();
  bad.inputs[0].type = DataType::kFLOAT;
  EXPECT_NE(test::declines(ref, bad).find("bool"), std::string::npos);
  bad = good();
  bad.outputs[0].type = DataType::kINT32;
  test::declines(ref, bad);
  bad = good();
  bad.inputs.pop_back();
  test::declines(ref, bad);
  bad = good();
  bad.params = SoftmaxParams{};
  test::declines(ref, bad);
  const Dims d4 = makeDims({1, 2, 2, 2});
  auto cl = test::config(LayerType::kSELECT, SelectParams{},
                         {test::desc(d4, DataType::kBOOL, TensorFormat::kCHANNELS_LAST),
                          test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST),
                          test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
                         {test::desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  EXPECT_NE(test::declines(ref, cl).find("linear"), std::string::npos);
}

}  // namespace
}  // namespace kiln
