// The shape and type rule of Expand (see ops/op.h).
#include <algorithm>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Expand::inputs = {1, 2, "x, dims source"};

Status Expand::shapeRule(const ExpandParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "expand";
  const Dims& d = in[0].dims;
  if (p.shape.nbDims < 0 || p.shape.nbDims > Dims::kMaxDims)
    return invalidArgument("expand: shape rank " + std::to_string(p.shape.nbDims) +
                           " is outside [0, 8]");
  Dims s = p.shape;
  KILN_RETURN_IF_ERROR(shape::dimsFromSource(layer, "shape dim", p.shapeDimsOf, in, 1, s));
  Dims o;
  o.nbDims = std::max(d.nbDims, s.nbDims);
  for (int32_t i = 0; i < o.nbDims; ++i) {
    // Trailing dims align; a missing dim acts as 1.
    const int32_t di = i - (o.nbDims - d.nbDims), si = i - (o.nbDims - s.nbDims);
    const int64_t a = di >= 0 ? d.d[di] : 1, b = si >= 0 ? s.d[si] : 1;
    if (b < 0) return invalidArgument("expand: shape " + dimsString(s) + " has a negative dim");
    if (a != b && a != 1 && b != 1)
      return invalidArgument("expand: input " + dimsString(d) + " does not broadcast with " +
                             "shape " + dimsString(s) + " (output dim " + std::to_string(i) + ": " +
                             std::to_string(a) + " vs " + std::to_string(b) + ")");
    o.d[i] = a == 1 ? b : a;
  }
  return shape::setOutput(layer, o, in[0].type, out);
}

// Elements are moved, not computed with: any type. A dims source keeps its type (never read).
bool Expand::computeTypes(const ExpandParams&, std::vector<DataType>& types, std::string&) {
  if (isFloatType(types[0])) types[0] = DataType::kFLOAT;
  return true;
}

}  // namespace kiln::ops
