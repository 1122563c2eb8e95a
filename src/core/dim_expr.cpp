#include "core/dim_expr.h"

#include <limits>
#include <new>

namespace kiln {

// A node of the arena: either a folded constant or an operation on a non-constant operand,
// which keeps its operands so that a later symbolic evaluator can walk it.
class DimExprBuilder::Expr final : public IDimensionExpr {
 public:
  explicit Expr(int64_t value) : constant_(true), value_(value) {}
  Expr(DimensionOperation op, const IDimensionExpr* first, const IDimensionExpr* second)
      : constant_(false), op_(op), first_(first), second_(second) {}

  bool isConstant() const noexcept override { return constant_; }
  int64_t getConstantValue() const noexcept override { return constant_ ? value_ : -1; }
  DimensionOperation op() const { return op_; }
  const IDimensionExpr* first() const { return first_; }
  const IDimensionExpr* second() const { return second_; }

 private:
  bool constant_;
  int64_t value_ = -1;
  DimensionOperation op_ = DimensionOperation::kSUM;
  const IDimensionExpr* first_ = nullptr;
  const IDimensionExpr* second_ = nullptr;
};

DimExprBuilder::DimExprBuilder() = default;
DimExprBuilder::~DimExprBuilder() = default;

const DimExprBuilder::Expr* DimExprBuilder::keep(std::unique_ptr<Expr> expr) noexcept {
  if (!expr) return nullptr;
  try {
    arena_.push_back(std::move(expr));
  } catch (...) {  // out of memory: the interface answers nullptr, never throws
    return nullptr;
  }
  return arena_.back().get();
}

const IDimensionExpr* DimExprBuilder::constant(int64_t value) noexcept {
  return keep(std::unique_ptr<Expr>(new (std::nothrow) Expr(value)));
}

bool evaluateDimensionOperation(DimensionOperation op, int64_t a, int64_t b,
                                int64_t& result) noexcept {
  switch (op) {
    case DimensionOperation::kSUM:
      return !__builtin_add_overflow(a, b, &result);
    case DimensionOperation::kPROD:
      return !__builtin_mul_overflow(a, b, &result);
    case DimensionOperation::kSUB:
      return !__builtin_sub_overflow(a, b, &result);
    case DimensionOperation::kMAX:
      result = a > b ? a : b;
      return true;
    case DimensionOperation::kMIN:
      result = a < b ? a : b;
      return true;
    case DimensionOperation::kEQUAL:
      result = a == b ? 1 : 0;
      return true;
    case DimensionOperation::kLESS:
      result = a < b ? 1 : 0;
      return true;
    case DimensionOperation::kFLOOR_DIV:
    case DimensionOperation::kCEIL_DIV: {
      if (b == 0) return false;
      // The one quotient that does not fit (and whose `%` is undefined behaviour too).
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return false;
      int64_t q = a / b;  // truncates toward zero
      const bool inexact = a % b != 0;
      const bool negative = (a < 0) != (b < 0);
      if (inexact && negative && op == DimensionOperation::kFLOOR_DIV) --q;
      if (inexact && !negative && op == DimensionOperation::kCEIL_DIV) ++q;
      result = q;
      return true;
    }
  }
  return false;  // an op value outside the enum
}

const IDimensionExpr* DimExprBuilder::operation(DimensionOperation op, const IDimensionExpr& first,
                                                const IDimensionExpr& second) noexcept {
  // The interface takes references, but a plugin may dereference a nullptr it got from an
  // earlier failed call. Reading the addresses through volatile stops the compiler from
  // assuming that they are non-null.
  const IDimensionExpr* volatile a = &first;
  const IDimensionExpr* volatile b = &second;
  const IDimensionExpr* pa = a;
  const IDimensionExpr* pb = b;
  if (!pa || !pb) return nullptr;
  if (pa->isConstant() && pb->isConstant()) {
    int64_t value = 0;
    if (!evaluateDimensionOperation(op, pa->getConstantValue(), pb->getConstantValue(), value))
      return nullptr;
    return constant(value);
  }
  if (static_cast<uint32_t>(op) > static_cast<uint32_t>(DimensionOperation::kCEIL_DIV))
    return nullptr;
  // A constant zero divisor is undefined whatever the other side is.
  if ((op == DimensionOperation::kFLOOR_DIV || op == DimensionOperation::kCEIL_DIV) &&
      pb->isConstant() && pb->getConstantValue() == 0)
    return nullptr;
  return keep(std::unique_ptr<Expr>(new (std::nothrow) Expr(op, pa, pb)));
}

DimsExprs DimExprBuilder::toExprs(const Dims& dims) noexcept {
  DimsExprs exprs;
  if (dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims) {
    exprs.nbDims = -1;
    return exprs;
  }
  exprs.nbDims = dims.nbDims;
  for (int32_t i = 0; i < dims.nbDims; ++i) exprs.d[i] = constant(dims.d[i]);
  return exprs;
}

size_t DimExprBuilder::size() const noexcept { return arena_.size(); }

bool toDims(const DimsExprs& exprs, Dims& dims) noexcept {
  if (exprs.nbDims < 0 || exprs.nbDims > Dims::kMaxDims) return false;
  Dims out;
  out.nbDims = exprs.nbDims;
  for (int32_t i = 0; i < exprs.nbDims; ++i) {
    const IDimensionExpr* e = exprs.d[i];
    if (!e || !e->isConstant()) return false;
    const int64_t v = e->getConstantValue();
    if (v < 0) return false;
    out.d[i] = v;
  }
  dims = out;
  return true;
}

}  // namespace kiln
