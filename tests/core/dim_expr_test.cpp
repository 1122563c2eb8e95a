// The engine's IExprBuilder (src/core/dim_expr): folding, undefined and overflowing operations,
// and the Dims conversions.
#include "core/dim_expr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

namespace kiln {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// The value of `op` computed the slow, obvious way in 128-bit arithmetic; false where undefined
// or outside int64.
bool slowEvaluate(DimensionOperation op, int64_t a, int64_t b, int64_t& out) {
  __int128 r = 0;
  const __int128 x = a, y = b;
  switch (op) {
    case DimensionOperation::kSUM:
      r = x + y;
      break;
    case DimensionOperation::kPROD:
      r = x * y;
      break;
    case DimensionOperation::kMAX:
      r = x > y ? x : y;
      break;
    case DimensionOperation::kMIN:
      r = x < y ? x : y;
      break;
    case DimensionOperation::kSUB:
      r = x - y;
      break;
    case DimensionOperation::kEQUAL:
      r = x == y;
      break;
    case DimensionOperation::kLESS:
      r = x < y;
      break;
    case DimensionOperation::kFLOOR_DIV:
    case DimensionOperation::kCEIL_DIV: {
      if (y == 0) return false;
      // The floor is the integer f with f*y <= x < (f+1)*y (y > 0), or f*y >= x > (f+1)*y
      // (y < 0); walk there from the truncated quotient.
      __int128 f = x / y;
      if (y > 0) {
        while (f * y > x) --f;
        while ((f + 1) * y <= x) ++f;
      } else {
        while (f * y < x) --f;
        while ((f + 1) * y >= x) ++f;
      }
      r = (op == DimensionOperation::kCEIL_DIV && f * y != x) ? f + 1 : f;
      break;
    }
  }
  if (r > kMax || r < kMin) return false;
  out = static_cast<int64_t>(r);
  return true;
}

const DimensionOperation kOps[] = {
    DimensionOperation::kSUM,  DimensionOperation::kPROD,      DimensionOperation::kMAX,
    DimensionOperation::kMIN,  DimensionOperation::kSUB,       DimensionOperation::kEQUAL,
    DimensionOperation::kLESS, DimensionOperation::kFLOOR_DIV, DimensionOperation::kCEIL_DIV};

TEST(DimExprBuilder, ConstantsFold) {
  DimExprBuilder b;
  const IDimensionExpr* seven = b.constant(7);
  const IDimensionExpr* minusTwo = b.constant(-2);
  ASSERT_TRUE(seven && minusTwo);
  EXPECT_TRUE(seven->isConstant());
  EXPECT_EQ(seven->getConstantValue(), 7);
  auto value = [&](DimensionOperation op, const IDimensionExpr* x, const IDimensionExpr* y) {
    const IDimensionExpr* e = b.operation(op, *x, *y);
    EXPECT_TRUE(e && e->isConstant());
    return e ? e->getConstantValue() : -12345;
  };
  EXPECT_EQ(value(DimensionOperation::kSUM, seven, minusTwo), 5);
  EXPECT_EQ(value(DimensionOperation::kPROD, seven, minusTwo), -14);
  EXPECT_EQ(value(DimensionOperation::kMAX, seven, minusTwo), 7);
  EXPECT_EQ(value(DimensionOperation::kMIN, seven, minusTwo), -2);
  EXPECT_EQ(value(DimensionOperation::kSUB, seven, minusTwo), 9);
  EXPECT_EQ(value(DimensionOperation::kEQUAL, seven, seven), 1);
  EXPECT_EQ(value(DimensionOperation::kEQUAL, seven, minusTwo), 0);
  EXPECT_EQ(value(DimensionOperation::kLESS, minusTwo, seven), 1);
  EXPECT_EQ(value(DimensionOperation::kLESS, seven, minusTwo), 0);
  EXPECT_EQ(value(DimensionOperation::kFLOOR_DIV, seven, minusTwo), -4);
  EXPECT_EQ(value(DimensionOperation::kCEIL_DIV, seven, minusTwo), -3);
  EXPECT_EQ(value(DimensionOperation::kFLOOR_DIV, seven, b.constant(2)), 3);
  EXPECT_EQ(value(DimensionOperation::kCEIL_DIV, seven, b.constant(2)), 4);
  EXPECT_EQ(value(DimensionOperation::kCEIL_DIV, b.constant(-7), b.constant(2)), -3);
  EXPECT_EQ(value(DimensionOperation::kFLOOR_DIV, b.constant(-7), b.constant(2)), -4);
  EXPECT_EQ(value(DimensionOperation::kFLOOR_DIV, b.constant(6), b.constant(3)), 2);
}

// What a plugin does when it dereferences a nullptr from an earlier failed call. Binding that
// reference is the plugin's undefined behaviour, which UBSan would stop here, before the builder
// could show that it copes.
__attribute__((no_sanitize("undefined"))) const IDimensionExpr* operateOnNull(
    DimExprBuilder& b, const IDimensionExpr& other, bool first) {
  const IDimensionExpr* null = nullptr;
  return first ? b.operation(DimensionOperation::kSUM, *null, other)
               : b.operation(DimensionOperation::kSUM, other, *null);
}

TEST(DimExprBuilder, UndefinedAndOverflowGiveNull) {
  DimExprBuilder b;
  const IDimensionExpr& zero = *b.constant(0);
  const IDimensionExpr& five = *b.constant(5);
  const IDimensionExpr& max = *b.constant(kMax);
  const IDimensionExpr& min = *b.constant(kMin);
  const IDimensionExpr& minusOne = *b.constant(-1);
  EXPECT_EQ(b.operation(DimensionOperation::kFLOOR_DIV, five, zero), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kCEIL_DIV, five, zero), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kSUM, max, five), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kSUB, min, five), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kPROD, max, five), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kFLOOR_DIV, min, minusOne), nullptr);
  EXPECT_EQ(b.operation(DimensionOperation::kCEIL_DIV, min, minusOne), nullptr);
  EXPECT_EQ(b.operation(static_cast<DimensionOperation>(99), five, five), nullptr);
  // A null operand (a plugin dereferencing an earlier nullptr).
  EXPECT_EQ(operateOnNull(b, five, true), nullptr);
  EXPECT_EQ(operateOnNull(b, five, false), nullptr);
}

TEST(DimExprBuilder, MatchesWideArithmeticOnRandomValues) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("random seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  DimExprBuilder b;
  auto draw = [&]() -> int64_t {
    switch (rng() % 4) {
      case 0:
        return static_cast<int64_t>(rng() % 41) - 20;  // small, zero included
      case 1:
        return static_cast<int64_t>(rng());  // anything
      case 2:
        return static_cast<int64_t>(rng() % 2000000000) - 1000000000;
      default:
        return (rng() & 1) ? kMax - static_cast<int64_t>(rng() % 3)
                           : kMin + static_cast<int64_t>(rng() % 3);
    }
  };
  for (int i = 0; i < 20000; ++i) {
    const int64_t x = draw(), y = draw();
    const DimensionOperation op = kOps[rng() % 9];
    int64_t want = 0;
    const bool defined = slowEvaluate(op, x, y, want);
    const IDimensionExpr* e = b.operation(op, *b.constant(x), *b.constant(y));
    ASSERT_EQ(e != nullptr, defined) << static_cast<int>(op) << " " << x << " " << y;
    if (defined) {
      ASSERT_TRUE(e->isConstant());
      ASSERT_EQ(e->getConstantValue(), want) << static_cast<int>(op) << " " << x << " " << y;
    }
  }
}

// An expression that is not constant, as a plugin or a future symbolic dim might hand in.
class Symbol final : public IDimensionExpr {
 public:
  bool isConstant() const noexcept override { return false; }
  int64_t getConstantValue() const noexcept override { return -1; }
};

TEST(DimExprBuilder, NonConstantOperandsGiveNonConstantResults) {
  DimExprBuilder b;
  Symbol s;
  const IDimensionExpr* e = b.operation(DimensionOperation::kSUM, s, *b.constant(3));
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->isConstant());
  EXPECT_EQ(e->getConstantValue(), -1);
  EXPECT_EQ(b.operation(DimensionOperation::kFLOOR_DIV, s, *b.constant(0)), nullptr);
  DimsExprs exprs = b.toExprs(makeDims({2, 3}));
  exprs.d[1] = e;
  Dims dims = makeDims({9});
  EXPECT_FALSE(toDims(exprs, dims));
  EXPECT_EQ(dims, makeDims({9}));  // untouched on failure
}

TEST(DimExprBuilder, DimsConversions) {
  DimExprBuilder b;
  const Dims d = makeDims({1, 3, 224, 0, 5, 6, 7, 8});
  DimsExprs e = b.toExprs(d);
  ASSERT_EQ(e.nbDims, 8);
  Dims back;
  ASSERT_TRUE(toDims(e, back));
  EXPECT_EQ(back, d);
  EXPECT_EQ(b.toExprs(Dims()).nbDims, 0);
  Dims bad;
  bad.nbDims = 9;
  EXPECT_EQ(b.toExprs(bad).nbDims, -1);
  bad.nbDims = -1;
  EXPECT_EQ(b.toExprs(bad).nbDims, -1);

  e.d[2] = nullptr;
  EXPECT_FALSE(toDims(e, back));
  e.d[2] = b.constant(-1);
  EXPECT_FALSE(toDims(e, back));
  e.d[2] = b.constant(224);
  e.nbDims = 9;
  EXPECT_FALSE(toDims(e, back));
  e.nbDims = -1;
  EXPECT_FALSE(toDims(e, back));
}

TEST(DimExprBuilder, ExpressionsLiveAsLongAsTheBuilder) {
  DimExprBuilder b;
  std::vector<const IDimensionExpr*> all;
  for (int i = 0; i < 5000; ++i) all.push_back(b.constant(i));  // grows the arena many times
  for (int i = 0; i < 5000; ++i) ASSERT_EQ(all[i]->getConstantValue(), i);
  EXPECT_EQ(b.size(), 5000u);
}

}  // namespace
}  // namespace kiln
