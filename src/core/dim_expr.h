// The engine's IExprBuilder: what plugins' getOutputDimensions() builds output shapes with.
//
// Today every dimension kiln hands a plugin is a constant, so expressions fold to numbers as they
// are built. Operations on an expression that is not constant (one a plugin made itself, or a
// future symbolic input dim) give a non-constant expression, so shape code written against the
// interface keeps working when dims become dynamic.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/plugin.h"
#include "kiln/types.h"

namespace kiln {

class DimExprBuilder final : public IExprBuilder {
 public:
  DimExprBuilder();
  ~DimExprBuilder();
  DimExprBuilder(const DimExprBuilder&) = delete;
  DimExprBuilder& operator=(const DimExprBuilder&) = delete;

  // Any int64 value (negative ones too: they are legal intermediate results). nullptr only if
  // memory runs out.
  const IDimensionExpr* constant(int64_t value) noexcept override;
  // nullptr for a null operand, division by zero, or a result that overflows int64.
  const IDimensionExpr* operation(DimensionOperation op, const IDimensionExpr& first,
                                  const IDimensionExpr& second) noexcept override;

  // One constant expression per dim. nbDims outside [0, kMaxDims] gives nbDims == -1.
  DimsExprs toExprs(const Dims& dims) noexcept;

  // Number of expressions made so far (they all live until the builder is destroyed).
  size_t size() const noexcept;

 private:
  class Expr;
  const Expr* keep(std::unique_ptr<Expr> expr) noexcept;

  std::vector<std::unique_ptr<Expr>> arena_;
};

// The dims an expression list stands for. False if nbDims is outside [0, kMaxDims] or any entry
// is null, not constant or negative; `dims` is left unchanged then.
bool toDims(const DimsExprs& exprs, Dims& dims) noexcept;

// The value of `op` on two constants, or false where it is undefined (division by zero) or
// overflows int64. Exposed for tests and for constant folding elsewhere.
bool evaluateDimensionOperation(DimensionOperation op, int64_t a, int64_t b,
                                int64_t& result) noexcept;

}  // namespace kiln
