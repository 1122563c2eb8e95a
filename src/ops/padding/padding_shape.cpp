// The shape and type rule of Padding (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Padding::inputs = {1, 1, "x"};

Status Padding::shapeRule(const PaddingParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "padding";
  KILN_RETURN_IF_ERROR(shape::checkEnum(layer, "unknown mode", p.mode));
  const Dims& d = in[0].dims;
  Dims o = d;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const std::string where =
        "padding: axis " + std::to_string(i) + " of input " + dimsString(d) + ": ";
    const int64_t b = p.before[i], a = p.after[i];
    if (b < 0 || a < 0 || b > shape::kMaxDim || a > shape::kMaxDim)
      return invalidArgument(where + "pads " + std::to_string(b) + " before and " +
                             std::to_string(a) + " after must be in [0, 2^60]");
    if (p.mode == PaddingMode::kREFLECT && (b >= d.d[i] || a >= d.d[i]) && (a > 0 || b > 0))
      return invalidArgument(where + "reflect pads " + std::to_string(b) + " before and " +
                             std::to_string(a) + " after must each be below the dim " +
                             std::to_string(d.d[i]));
    if (p.mode == PaddingMode::kEDGE && d.d[i] == 0 && (a > 0 || b > 0))
      return invalidArgument(where + "edge padding of an empty axis has no edge to repeat");
    o.d[i] = d.d[i] + b + a;  // each term is at most 2^60
    if (o.d[i] > shape::kMaxDim) return invalidArgument(where + "padded dim is too large");
  }
  return shape::setOutput(layer, o, in[0].type, out);
}

// Elements are moved, not computed with: any type.
bool Padding::computeTypes(const PaddingParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
