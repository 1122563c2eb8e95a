// The shape and type rule of Concatenation (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Concatenation::inputs = {1, -1, "x0, x1, ..."};

Status Concatenation::shapeRule(const ConcatenationParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "concatenation";
  const Dims& first = in[0].dims;
  if (first.nbDims < 1) return invalidArgument("concatenation: inputs must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(shape::normalizeAxis(layer, p.axis, first.nbDims, &axis));
  Dims o = first;
  o.d[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Dims& d = in[i].dims;
    if (in[i].type != in[0].type)
      return invalidArgument("concatenation: input " + std::to_string(i) + " is " +
                             dataTypeName(in[i].type) + " but input 0 is " +
                             dataTypeName(in[0].type));
    if (d.nbDims != first.nbDims)
      return invalidArgument("concatenation: input " + std::to_string(i) + " dims " +
                             dimsString(d) + " have a different rank from input 0 dims " +
                             dimsString(first));
    for (int32_t k = 0; k < d.nbDims; ++k)
      if (k != axis && d.d[k] != first.d[k])
        return invalidArgument("concatenation: input " + std::to_string(i) + " dims " +
                               dimsString(d) + " differ from input 0 dims " + dimsString(first) +
                               " in dim " + std::to_string(k) + " (only axis " +
                               std::to_string(axis) + " may differ)");
    // Each dim is below 2^60 (checkShape), so the sum cannot overflow before the check.
    o.d[axis] += d.d[axis];
    KILN_RETURN_IF_ERROR(shape::checkOutputDims(layer, o));
  }
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

// Elements are moved, not computed with; inputs of mixed types meet in fp32 (one type for all).
bool Concatenation::computeTypes(const ConcatenationParams&, std::vector<DataType>& types,
                                 std::string&) {
  bool anyFloat = false;
  for (DataType t : types) anyFloat = anyFloat || isFloatType(t);
  if (anyFloat)
    for (DataType& t : types) t = DataType::kFLOAT;
  return true;
}

}  // namespace kiln::ops
