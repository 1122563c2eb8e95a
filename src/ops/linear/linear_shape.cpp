// The shape and type rule of Linear (kiln/ops/linear.h): X [..., M, K], W [K, N] (or [N, K]
// transposed), bias [N], residual of the output's shape, all of one float type; the output is X's
// shape with the last dim N.
#include <string>
#include <vector>

#include "ops/linear/linear_semantics.h"
#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {
namespace {

constexpr const char* kLayer = "linear";

std::string inputName(const char* what, size_t index) {
  return std::string(what) + " (input " + std::to_string(index) + ")";
}

}  // namespace

const InputCount Linear::inputs = {2, 4, "X, W[, bias][, residual]"};

Status Linear::shapeRule(const LinearParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "unknown activation type", p.activation));
  if (p.hasActivation && p.activation == ActivationType::kNOT)
    return invalidArgument(std::string(kLayer) +
                           ": the activation must have a float form; not is logical");
  const linear::InputSlots slots(p);
  if (static_cast<int32_t>(in.size()) != slots.count)
    return invalidArgument(std::string(kLayer) + ": expects " + std::to_string(slots.count) +
                           " inputs (X, W" + (p.hasBias ? ", bias" : "") +
                           (p.hasResidual ? ", residual" : "") + ") for its parameters, got " +
                           std::to_string(in.size()));
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].type != in[0].type)
      return invalidArgument(std::string(kLayer) + ": input " + std::to_string(i) + " is " +
                             dataTypeName(in[i].type) + " but X is " + dataTypeName(in[0].type) +
                             "; all inputs must have one type");
  const Dims& x = in[0].dims;
  const Dims& w = in[1].dims;
  if (x.nbDims < 2)
    return invalidArgument(std::string(kLayer) + ": X (input 0) is " + dimsString(x) +
                           "; it needs rank >= 2 ([..., M, K])");
  if (w.nbDims != 2)
    return invalidArgument(std::string(kLayer) + ": W (input 1) is " + dimsString(w) +
                           "; it must be rank 2 (" +
                           (p.transposeW ? "[N, K], transposed" : "[K, N]") + ")");
  int64_t k = 0, n = 0;
  shape::matrixRowsCols(w, p.transposeW, &k, &n);
  if (x.d[x.nbDims - 1] != k)
    return invalidArgument(
        std::string(kLayer) + ": inner dims differ: X (input 0) " + dimsString(x) +
        " has K = " + shape::str(x.d[x.nbDims - 1]) + " but W (input 1) " + dimsString(w) +
        (p.transposeW ? " ([N, K], transposed)" : " ([K, N])") + " has K = " + shape::str(k));
  Dims y = x;
  y.d[y.nbDims - 1] = n;
  if (p.hasBias) {
    const Dims& b = in[static_cast<size_t>(slots.bias)].dims;
    if (b.nbDims != 1 || b.d[0] != n)
      return invalidArgument(std::string(kLayer) + ": " + inputName("bias", slots.bias) + " is " +
                             dimsString(b) + ", expected [" + shape::str(n) +
                             "] (one value per output column)");
  }
  if (p.hasResidual) {
    const Dims& r = in[static_cast<size_t>(slots.residual)].dims;
    if (r != y)
      return invalidArgument(std::string(kLayer) + ": " + inputName("residual", slots.residual) +
                             " is " + dimsString(r) + " but the output is " + dimsString(y) +
                             "; the residual must have exactly the output's shape");
  }
  return shape::setOutput(kLayer, y, in[0].type, out);
}

// Floats in FP32, or FP16/BF16 where the builder asks for half: every kernel accumulates the
// product and applies the epilogue in FP32 either way.
bool Linear::computeTypes(const LinearParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
