// Elementwise: its shape rule (numpy broadcasting, comparisons giving bool, prelu) and its CPU
// tactics: every tactic against an independent broadcasting loop on random shapes (arithmetic,
// comparisons, prelu), hand-computed cases, NaN, integer edge cases, refusals and concurrent runs.
#include <gtest/gtest.h>

#include <limits>
#include <thread>
#include <type_traits>

#include "ops/op_test_util.h"

namespace kiln::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Shape rule

TEST(InferElementwise, BroadcastsLikeNumpy) {
  ElementwiseParams p;
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 1, 4}), shape({3, 1})}).dims,
            makeDims({2, 3, 4}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({}), shape({5})}).dims, makeDims({5}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({0, 3}), shape({1, 3})}).dims,
            makeDims({0, 3}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({1}), shape({0})}).dims, makeDims({0}));
  const TensorShape s = inferOk(ops::Elementwise::infer, p,
                                {shape({4}, DataType::kINT64), shape({1, 4}, DataType::kINT64)});
  EXPECT_EQ(s.dims, makeDims({1, 4}));
  EXPECT_EQ(s.type, DataType::kINT64);
}

TEST(InferElementwise, Refusals) {
  ElementwiseParams p;
  inferFails(ops::Elementwise::infer, p, {shape({2, 3}), shape({4, 3})}, "do not broadcast");
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2}, DataType::kINT32)},
             "different types");
  inferFails(ops::Elementwise::infer, p, {shape({2}, DataType::kBOOL), shape({2}, DataType::kBOOL)},
             "bool");
  inferFails(ops::Elementwise::infer, p, {shape({2})}, "expects 2 input");
  inferFails(ops::Elementwise::infer, p, {shape({2, -1}), shape({2, 1})}, "negative dim");
  TensorShape bad = shape({2});
  bad.dims.nbDims = 9;
  inferFails(ops::Elementwise::infer, p, {bad, shape({2})}, "rank 9");
  bad = shape({2});
  bad.type = static_cast<DataType>(42);
  inferFails(ops::Elementwise::infer, p, {bad, bad}, "invalid data type");
  p.op = static_cast<ElementwiseOp>(99);
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2})}, "unknown op 99");
  p.op = ElementwiseOp::kADD;
  // The output must stay addressable.
  inferFails(ops::Elementwise::infer, p, {shape({int64_t{1} << 31, 1}), shape({int64_t{1} << 31})},
             "too large");
}

TEST(InferOnnxElementwise, ComparisonsGiveBool) {
  ElementwiseParams p;
  for (ElementwiseOp op : {ElementwiseOp::kEQUAL, ElementwiseOp::kLESS, ElementwiseOp::kGREATER}) {
    p.op = op;
    for (DataType t : {DataType::kFLOAT, DataType::kHALF, DataType::kINT32, DataType::kINT64}) {
      const TensorShape s =
          inferOk(ops::Elementwise::infer, p, {shape({2, 1, 3}, t), shape({4, 1}, t)});
      EXPECT_EQ(s.type, DataType::kBOOL);
      EXPECT_EQ(s.dims, makeDims({2, 4, 3}));
    }
    inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2}, DataType::kINT32)},
               "different types");
  }
  p.op = ElementwiseOp::kEQUAL;
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p,
                    {shape({3}, DataType::kBOOL), shape({1}, DataType::kBOOL)})
                .type,
            DataType::kBOOL);
  p.op = ElementwiseOp::kLESS;
  inferFails(ops::Elementwise::infer, p, {shape({3}, DataType::kBOOL), shape({3}, DataType::kBOOL)},
             "not defined on bool");
  for (ElementwiseOp op : {ElementwiseOp::kAND, ElementwiseOp::kOR, ElementwiseOp::kXOR}) {
    p.op = op;
    EXPECT_EQ(inferOk(ops::Elementwise::infer, p,
                      {shape({2, 1}, DataType::kBOOL), shape({3}, DataType::kBOOL)})
                  .dims,
              makeDims({2, 3}));
    inferFails(ops::Elementwise::infer, p, {shape({3}), shape({3})}, "needs bool inputs");
  }
}

TEST(InferOnnxElementwise, PreluBroadcastsSlopeToInputOnly) {
  ElementwiseParams p{ElementwiseOp::kPRELU};
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 3, 4, 5}), shape({3, 1, 1})}).dims,
            makeDims({2, 3, 4, 5}));
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2, 3}), shape({})}).type, DataType::kFLOAT);
  inferFails(ops::Elementwise::infer, p, {shape({3, 1}), shape({3, 4})},
             "do not broadcast to the input");
  inferFails(ops::Elementwise::infer, p, {shape({3}), shape({2, 3})},
             "do not broadcast to the input");
  inferFails(ops::Elementwise::infer, p,
             {shape({3}, DataType::kINT32), shape({3}, DataType::kINT32)}, "floating-point");
  p.op = static_cast<ElementwiseOp>(enumCount(ElementwiseOp{}));
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2})}, "unknown op 18");
}

TEST(InferOnnxElementwise, ModIsIntegerOnlyAndFmodTakesEitherKind) {
  ElementwiseParams p{ElementwiseOp::kMOD};
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p,
                    {shape({2, 3}, DataType::kINT64), shape({3}, DataType::kINT64)})
                .type,
            DataType::kINT64);
  inferFails(ops::Elementwise::infer, p, {shape({2}), shape({2})}, "integers only");
  inferFails(ops::Elementwise::infer, p, {shape({2}, DataType::kHALF), shape({2}, DataType::kHALF)},
             "fmod");
  p.op = ElementwiseOp::kFMOD;
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p, {shape({2}), shape({2})}).type, DataType::kFLOAT);
  EXPECT_EQ(inferOk(ops::Elementwise::infer, p,
                    {shape({2}, DataType::kINT32), shape({1}, DataType::kINT32)})
                .type,
            DataType::kINT32);
}

// ---------------------------------------------------------------------------------------------
// CPU tactics

const ElementwiseOp kAllOps[] = {ElementwiseOp::kADD, ElementwiseOp::kSUB,  ElementwiseOp::kMUL,
                                 ElementwiseOp::kDIV, ElementwiseOp::kMAX,  ElementwiseOp::kMIN,
                                 ElementwiseOp::kPOW, ElementwiseOp::kFMOD, ElementwiseOp::kMOD};

__int128 floorDiv(__int128 x, __int128 y) {
  const __int128 q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

// The documented semantics, written out again (not shared with the kernels).
template <class T>
T expectedOp(ElementwiseOp op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ElementwiseOp::kADD:
        return a + b;
      case ElementwiseOp::kSUB:
        return a - b;
      case ElementwiseOp::kMUL:
        return a * b;
      case ElementwiseOp::kDIV:
        return a / b;
      case ElementwiseOp::kMAX:
        return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
      case ElementwiseOp::kMIN:
        return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
      case ElementwiseOp::kPOW:
        return std::pow(a, b);
      case ElementwiseOp::kFMOD:
        return std::fmod(a, b);
      default:
        break;
    }
  } else {
    const __int128 x = a, y = b;
    __int128 r = 0;
    switch (op) {
      case ElementwiseOp::kADD:
        r = x + y;
        break;
      case ElementwiseOp::kSUB:
        r = x - y;
        break;
      case ElementwiseOp::kMUL:
        r = x * y;
        break;
      case ElementwiseOp::kDIV:
        r = y == 0 ? 0 : x / y;
        break;
      case ElementwiseOp::kMAX:
        r = std::max(x, y);
        break;
      case ElementwiseOp::kMIN:
        r = std::min(x, y);
        break;
      case ElementwiseOp::kFMOD:  // C's %: truncated, the dividend's sign; by 0 gives 0
        r = y == 0 ? 0 : x % y;
        break;
      case ElementwiseOp::kMOD:  // Python's %: floored, the divisor's sign; by 0 gives 0
        r = y == 0 ? 0 : x - y * floorDiv(x, y);
        break;
      default:
        break;
    }
    // Two's complement wrap-around to T's width.
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<unsigned __int128>(r)));
  }
  return T{};
}

// out[i] for numpy broadcasting, by coordinates.
template <class T>
std::vector<T> broadcastExpected(ElementwiseOp op, const std::vector<T>& a, const Dims& da,
                                 const std::vector<T>& b, const Dims& db, const Dims& out) {
  const auto sa = stridesOf(da), sb = stridesOf(db);
  std::vector<T> r(static_cast<size_t>(volume(out)));
  for (int64_t i = 0; i < volume(out); ++i) {
    const auto c = unravel(i, out);
    int64_t ia = 0, ib = 0;
    for (int32_t k = 0; k < da.nbDims; ++k) {
      const int64_t ck = c[static_cast<size_t>(k + out.nbDims - da.nbDims)];
      ia += (da.d[k] == 1 ? 0 : ck) * sa[static_cast<size_t>(k)];
    }
    for (int32_t k = 0; k < db.nbDims; ++k) {
      const int64_t ck = c[static_cast<size_t>(k + out.nbDims - db.nbDims)];
      ib += (db.d[k] == 1 ? 0 : ck) * sb[static_cast<size_t>(k)];
    }
    r[static_cast<size_t>(i)] =
        expectedOp(op, a[static_cast<size_t>(ia)], b[static_cast<size_t>(ib)]);
  }
  return r;
}

template <class T>
std::vector<T> randomValues(Rng& rng, int64_t n, ElementwiseOp op, bool exponent) {
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      // pow: positive bases and moderate exponents keep results finite and comparable.
      x = op == ElementwiseOp::kPOW
              ? (exponent ? rng.nonZeroFloat(-3.f, 3.f) : rng.uniformFloat(0.25f, 3.f))
              : rng.nonZeroFloat(-8.f, 8.f);
    } else {
      x = static_cast<T>(rng.nonZeroInt(-1000, 1000));
    }
  }
  return v;
}

// Shapes in one of three families: the same, one of volume 1, or general broadcasting.
void randomShapes(Rng& rng, int family, Dims* a, Dims* b) {
  const int32_t rank = static_cast<int32_t>(rng.uniformInt(0, 5));
  const Dims full = rng.dims(rank, 5);
  if (family == 0) {
    *a = full;
    *b = full;
  } else if (family == 1) {
    *a = full;
    *b = rng.dims(static_cast<int32_t>(rng.uniformInt(0, 3)), 1);
  } else {
    // Each input: a suffix of the full rank with random dims replaced by 1.
    for (Dims* d : {a, b}) {
      const int32_t r = static_cast<int32_t>(rng.uniformInt(0, rank));
      d->nbDims = r;
      for (int32_t i = 0; i < r; ++i)
        d->d[i] = rng.uniformInt(0, 2) == 0 ? 1 : full.d[i + rank - r];
    }
  }
  if (rng.uniformInt(0, 1)) std::swap(*a, *b);
}

template <class T>
void checkAllTactics(Rng& rng, int rounds) {
  SCOPED_TRACE(rng.trace());
  for (ElementwiseOp op : kAllOps) {
    if (!std::is_floating_point_v<T> && op == ElementwiseOp::kPOW) continue;
    if (std::is_floating_point_v<T> && op == ElementwiseOp::kMOD) continue;
    for (int round = 0; round < rounds; ++round) {
      const int family = round % 3;
      Dims da, db;
      randomShapes(rng, family, &da, &db);
      ElementwiseParams p{op};
      std::vector<PluginTensorDesc> in = {desc(da, typeOf<T>()), desc(db, typeOf<T>())};
      auto cfg =
          config(LayerType::kELEMENTWISE, p, in, inferredOutputs(ops::Elementwise::infer, p, in));
      const Dims dout = cfg.outputs[0].dims;
      SCOPED_TRACE("op " + std::to_string(static_cast<int>(op)) + " a " +
                   std::to_string(volume(da)) + " b " + std::to_string(volume(db)) + " rank " +
                   std::to_string(dout.nbDims));
      const auto a = randomValues<T>(rng, volume(da), op, false);
      const auto b = randomValues<T>(rng, volume(db), op, true);
      const auto want = broadcastExpected(op, a, da, b, db, dout);
      for (const Tactic& t : ops::Elementwise::cpuTactics()) {
        std::string why;
        auto k = t.create(cfg, &why);
        const bool noBroadcast = volume(da) == volume(dout) && volume(db) == volume(dout);
        const bool scalar = (volume(da) == 1 && volume(db) == volume(dout)) ||
                            (volume(db) == 1 && volume(da) == volume(dout));
        const std::string name = t.name;
        const bool shouldAccept = name == "reference" || (name == "same_shape" && noBroadcast) ||
                                  (name == "scalar_broadcast" && scalar);
        ASSERT_EQ(static_cast<bool>(k), shouldAccept) << name << ": " << why;
        if (!k) continue;
        std::vector<T> got(want.size(), T{7});
        ASSERT_TRUE(runKernel(*k, {a.data(), b.data()}, {got.data()}).isOk());
        for (size_t i = 0; i < want.size(); ++i) {
          if constexpr (std::is_floating_point_v<T>) {
            ASSERT_TRUE(sameFloat(got[i], want[i]))
                << name << " [" << i << "]: " << got[i] << " vs " << want[i];
          } else {
            ASSERT_EQ(got[i], want[i]) << name << " [" << i << "]";
          }
        }
      }
    }
  }
}

TEST(Elementwise, TacticsMatchBroadcastingFp32) {
  Rng rng;
  checkAllTactics<float>(rng, 15);
}
TEST(Elementwise, TacticsMatchBroadcastingInt32) {
  Rng rng;
  checkAllTactics<int32_t>(rng, 9);
}
TEST(Elementwise, TacticsMatchBroadcastingInt64) {
  Rng rng;
  checkAllTactics<int64_t>(rng, 9);
}

// Runs the reference tactic on explicit data.
template <class T>
std::vector<T> runReference(ElementwiseOp op, const Dims& da, std::vector<T> a, const Dims& db,
                            std::vector<T> b) {
  ElementwiseParams p{op};
  std::vector<PluginTensorDesc> in = {desc(da, typeOf<T>()), desc(db, typeOf<T>())};
  auto cfg =
      config(LayerType::kELEMENTWISE, p, in, inferredOutputs(ops::Elementwise::infer, p, in));
  auto k = create(tacticNamed(ops::Elementwise::cpuTactics(), "reference"), cfg);
  std::vector<T> out(static_cast<size_t>(volume(cfg.outputs[0].dims)));
  if (k) {
    EXPECT_TRUE(runKernel(*k, {a.data(), b.data()}, {out.data()}).isOk());
  }
  return out;
}

TEST(Elementwise, HandComputed) {
  // [2,1] - [3] -> [2,3]
  EXPECT_EQ(runReference<float>(ElementwiseOp::kSUB, makeDims({2, 1}), {10.f, 20.f}, makeDims({3}),
                                {1.f, 2.f, 3.f}),
            (std::vector<float>{9.f, 8.f, 7.f, 19.f, 18.f, 17.f}));
  EXPECT_EQ(runReference<float>(ElementwiseOp::kPOW, makeDims({2}), {2.f, 9.f}, makeDims({2}),
                                {3.f, 0.5f}),
            (std::vector<float>{8.f, 3.f}));
  EXPECT_EQ(
      runReference<int32_t>(ElementwiseOp::kMAX, makeDims({3}), {-1, 5, 2}, makeDims({1}), {3}),
      (std::vector<int32_t>{3, 5, 3}));
  // A scalar (rank 0) with a scalar.
  EXPECT_EQ(runReference<float>(ElementwiseOp::kDIV, makeDims({}), {3.f}, makeDims({}), {2.f}),
            (std::vector<float>{1.5f}));
}

TEST(Elementwise, RemaindersTakeTheRightSign) {
  // ONNX's test_mod_mixed_sign cases: fmod keeps the dividend's sign, mod the divisor's.
  const std::vector<float> fa = {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f};
  const std::vector<float> fb = {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
  const auto f = runReference<float>(ElementwiseOp::kFMOD, makeDims({6}), fa, makeDims({6}), fb);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], std::fmod(fa[i], fb[i])) << i;
  EXPECT_LT(f[0], 0.f);
  EXPECT_GT(f[1], 0.f);
  const std::vector<int32_t> ia = {-4, 7, 5, 4, -7, 8}, ib = {2, -3, 8, -2, 3, 5};
  EXPECT_EQ(runReference<int32_t>(ElementwiseOp::kMOD, makeDims({6}), ia, makeDims({6}), ib),
            (std::vector<int32_t>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(runReference<int32_t>(ElementwiseOp::kFMOD, makeDims({6}), ia, makeDims({6}), ib),
            (std::vector<int32_t>{0, 1, 5, 0, -1, 3}));
  // By zero and MIN by -1: 0, never a trap; fmod by 0 on floats is NaN, as in C.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (ElementwiseOp op : {ElementwiseOp::kMOD, ElementwiseOp::kFMOD})
    EXPECT_EQ(runReference<int64_t>(op, makeDims({3}), {5, kMin, -9}, makeDims({3}), {0, -1, 4}),
              (std::vector<int64_t>{0, 0, op == ElementwiseOp::kMOD ? 3 : -1}));
  EXPECT_TRUE(std::isnan(
      runReference<float>(ElementwiseOp::kFMOD, makeDims({1}), {1.f}, makeDims({1}), {0.f})[0]));
}

TEST(Elementwise, NaNPropagatesThroughMaxAndMin) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ElementwiseOp op : {ElementwiseOp::kMAX, ElementwiseOp::kMIN}) {
    const auto r =
        runReference<float>(op, makeDims({3}), {nan, 1.f, 2.f}, makeDims({3}), {1.f, nan, 3.f});
    EXPECT_TRUE(std::isnan(r[0]));
    EXPECT_TRUE(std::isnan(r[1]));
    EXPECT_EQ(r[2], op == ElementwiseOp::kMAX ? 3.f : 2.f);
  }
}

TEST(Elementwise, IntegerEdgeCasesAreDefined) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  // Division by zero is 0; MIN / -1 wraps to MIN; division truncates toward zero.
  EXPECT_EQ(runReference<int32_t>(ElementwiseOp::kDIV, makeDims({4}), {7, kMin, -7, 0},
                                  makeDims({4}), {0, -1, 2, 0}),
            (std::vector<int32_t>{0, kMin, -3, 0}));
  EXPECT_EQ(runReference<int32_t>(ElementwiseOp::kADD, makeDims({1}), {kMax}, makeDims({1}), {1}),
            (std::vector<int32_t>{kMin}));
  EXPECT_EQ(runReference<int64_t>(ElementwiseOp::kMUL, makeDims({1}),
                                  {std::numeric_limits<int64_t>::max()}, makeDims({1}), {2}),
            (std::vector<int64_t>{-2}));
  // Every tactic, not just the reference, divides by zero without trapping.
  for (const Tactic& t : ops::Elementwise::cpuTactics()) {
    ElementwiseParams p{ElementwiseOp::kDIV};
    std::vector<PluginTensorDesc> in = {desc(makeDims({3}), DataType::kINT64),
                                        desc(makeDims({1}), DataType::kINT64)};
    auto cfg =
        config(LayerType::kELEMENTWISE, p, in, inferredOutputs(ops::Elementwise::infer, p, in));
    std::string why;
    auto k = t.create(cfg, &why);
    if (!k) continue;
    std::vector<int64_t> a = {5, -5, 1}, b = {0}, out(3, 9);
    ASSERT_TRUE(runKernel(*k, {a.data(), b.data()}, {out.data()}).isOk());
    EXPECT_EQ(out, (std::vector<int64_t>{0, 0, 0})) << t.name;
  }
}

TEST(Elementwise, Refusals) {
  ElementwiseParams p{ElementwiseOp::kADD};
  const Dims d = makeDims({2, 3});
  auto make = [&](DataType t, TensorFormat f = TensorFormat::kLINEAR) {
    return config(LayerType::kELEMENTWISE, p, {desc(d, t, f), desc(d, t, f)}, {desc(d, t, f)});
  };
  const auto& ref = tacticNamed(ops::Elementwise::cpuTactics(), "reference");
  EXPECT_NE(declines(ref, make(DataType::kHALF)).find("fp16"), std::string::npos);
  p.op = ElementwiseOp::kPOW;
  EXPECT_NE(declines(ref, make(DataType::kINT32)).find("pow"), std::string::npos);
  p.op = ElementwiseOp::kADD;
  const Dims d4 = makeDims({1, 2, 2, 2});
  auto cl = config(LayerType::kELEMENTWISE, p,
                   {desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST),
                    desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)},
                   {desc(d4, DataType::kFLOAT, TensorFormat::kCHANNELS_LAST)});
  EXPECT_NE(declines(ref, cl).find("linear"), std::string::npos);

  // A corrupted plan: the output is bigger than the inputs make it. No tactic may accept.
  for (const Tactic& t : ops::Elementwise::cpuTactics()) {
    auto bad = make(DataType::kFLOAT);
    bad.outputs[0].dims = makeDims({2, 4});
    EXPECT_NE(declines(t, bad).find("[2,4]"), std::string::npos) << t.name;
    bad = make(DataType::kFLOAT);
    bad.outputs[0].type = DataType::kINT32;
    declines(t, bad);
    bad = make(DataType::kFLOAT);
    bad.inputs.pop_back();
    declines(t, bad);
    bad = make(DataType::kFLOAT);
    bad.params = SoftmaxParams{};
    declines(t, bad);
    bad = make(DataType::kFLOAT);
    bad.inputs[1].device = DeviceKind::kCUDA;
    declines(t, bad);
  }
  // Tactics decline shapes they are not made for, saying so.
  auto bc = config(LayerType::kELEMENTWISE, p, {desc(makeDims({2, 1})), desc(makeDims({3}))},
                   {desc(makeDims({2, 3}))});
  EXPECT_NE(
      declines(tacticNamed(ops::Elementwise::cpuTactics(), "same_shape"), bc).find("broadcast"),
      std::string::npos);
  declines(tacticNamed(ops::Elementwise::cpuTactics(), "scalar_broadcast"), bc);
}

TEST(Elementwise, RunsConcurrently) {
  Rng rng;
  SCOPED_TRACE(rng.trace());
  ElementwiseParams p{ElementwiseOp::kMUL};
  const Dims da = makeDims({8, 1, 16}), db = makeDims({5, 1});
  std::vector<PluginTensorDesc> in = {desc(da), desc(db)};
  auto cfg =
      config(LayerType::kELEMENTWISE, p, in, inferredOutputs(ops::Elementwise::infer, p, in));
  auto k = create(tacticNamed(ops::Elementwise::cpuTactics(), "reference"), cfg);
  ASSERT_TRUE(k);
  const auto a = rng.floats(volume(da)), b = rng.floats(volume(db));
  const auto want = broadcastExpected(p.op, a, da, b, db, cfg.outputs[0].dims);
  std::vector<std::vector<float>> outs(4, std::vector<float>(want.size()));
  std::vector<std::thread> threads;
  for (auto& o : outs)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) (void)runKernel(*k, {a.data(), b.data()}, {o.data()});
    });
  for (auto& t : threads) t.join();
  for (const auto& o : outs) EXPECT_EQ(o, want);
}

// ---------------------------------------------------------------------------------------------
// Comparisons and prelu

// Every op with a bool output: the comparisons, then the logical ops (bool only).
const ElementwiseOp kBoolOutputOps[] = {ElementwiseOp::kEQUAL,
                                        ElementwiseOp::kLESS,
                                        ElementwiseOp::kGREATER,
                                        ElementwiseOp::kGREATER_OR_EQUAL,
                                        ElementwiseOp::kLESS_OR_EQUAL,
                                        ElementwiseOp::kAND,
                                        ElementwiseOp::kOR,
                                        ElementwiseOp::kXOR};

bool definedOn(ElementwiseOp op, bool isBool) {
  const bool logical =
      op == ElementwiseOp::kAND || op == ElementwiseOp::kOR || op == ElementwiseOp::kXOR;
  return isBool ? (logical || op == ElementwiseOp::kEQUAL) : !logical;
}

template <class T>
uint8_t expectedCompare(ElementwiseOp op, T a, T b) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    const bool x = a != 0, y = b != 0;
    switch (op) {
      case ElementwiseOp::kAND:
        return x && y;
      case ElementwiseOp::kOR:
        return x || y;
      case ElementwiseOp::kXOR:
        return x != y;
      default:
        return x == y;
    }
  }
  switch (op) {
    case ElementwiseOp::kEQUAL:
      return a == b;
    case ElementwiseOp::kLESS:
      return a < b;
    case ElementwiseOp::kGREATER_OR_EQUAL:
      return a >= b;
    case ElementwiseOp::kLESS_OR_EQUAL:
      return a <= b;
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
  std::vector<PluginTensorDesc> in = {desc(da, typeOf<In>()), desc(db, typeOf<In>())};
  auto cfg =
      config(LayerType::kELEMENTWISE, p, in, inferredOutputs(ops::Elementwise::infer, p, in));
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
    ASSERT_TRUE(runKernel(*k, {a.data(), b.data()}, {got.data()}).isOk());
    for (size_t i = 0; i < want.size(); ++i) {
      if constexpr (std::is_floating_point_v<Out>) {
        ASSERT_TRUE(sameFloat(got[i], want[i]))
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
  for (ElementwiseOp op : kBoolOutputOps) {
    if (!definedOn(op, std::is_same_v<T, uint8_t>)) continue;
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
TEST(OnnxElementwise, EqualAndLogicalOpsMatchLoopBool) {
  Rng rng;
  checkComparisons<uint8_t>(rng, 9);
}

TEST(OnnxElementwise, ComparisonsWithNaNAreFalse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {nan, 1.f, nan}, b = {1.f, nan, nan};
  for (ElementwiseOp op : {ElementwiseOp::kEQUAL, ElementwiseOp::kLESS, ElementwiseOp::kGREATER,
                           ElementwiseOp::kGREATER_OR_EQUAL, ElementwiseOp::kLESS_OR_EQUAL})
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
  const auto& ref = tacticNamed(ops::Elementwise::cpuTactics(), "reference");
  const Dims d = makeDims({2, 3});
  auto make = [&](ElementwiseOp op, DataType in, DataType out) {
    return config(LayerType::kELEMENTWISE, ElementwiseParams{op}, {desc(d, in), desc(d, in)},
                  {desc(d, out)});
  };
  // A corrupted plan: a comparison claiming an fp32 output.
  for (const Tactic& t : ops::Elementwise::cpuTactics())
    declines(t, make(ElementwiseOp::kLESS, DataType::kFLOAT, DataType::kFLOAT));
  declines(ref, make(ElementwiseOp::kLESS, DataType::kBOOL, DataType::kBOOL));
  EXPECT_NE(
      declines(ref, make(ElementwiseOp::kEQUAL, DataType::kHALF, DataType::kBOOL)).find("fp16"),
      std::string::npos);
  declines(ref, make(ElementwiseOp::kPRELU, DataType::kINT32, DataType::kINT32));
}

}  // namespace
}  // namespace kiln::testing
