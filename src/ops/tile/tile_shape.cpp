// The shape and type rule of Tile (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Tile::inputs = {1, 1, "x"};

Status Tile::shapeRule(const TileParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "tile";
  const Dims& d = in[0].dims;
  KILN_RETURN_IF_ERROR(shape::checkParamRank(layer, "repeats", p.repeats, d.nbDims));
  Dims o = d;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const int64_t r = p.repeats.d[i];
    // ONNX requires repeats >= 0; 0 gives an empty axis.
    if (r < 0)
      return invalidArgument("tile: repeats " + dimsString(p.repeats) + " has negative " +
                             std::to_string(r) + " on axis " + std::to_string(i));
    if (d.d[i] != 0 && r > shape::kMaxDim / d.d[i])
      return invalidArgument("tile: repeats " + dimsString(p.repeats) + " of input " +
                             dimsString(d) + " give a dim that is too large");
    o.d[i] = d.d[i] * r;
  }
  return shape::setOutput(layer, o, in[0].type, out);
}

// Elements are moved, not computed with: any type.
bool Tile::computeTypes(const TileParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
