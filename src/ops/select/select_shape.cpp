// The shape and type rule of Select (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Select::inputs = {3, 3, "condition, x, y"};

Status Select::shapeRule(const SelectParams&, const Shapes& in, Shapes& out) {
  const char* layer = "select";
  if (in[0].type != DataType::kBOOL)
    return invalidArgument(std::string("select: condition (input 0) must be bool, got ") +
                           dataTypeName(in[0].type));
  if (in[1].type != in[2].type)
    return invalidArgument(std::string("select: x and y have different types (") +
                           dataTypeName(in[1].type) + " and " + dataTypeName(in[2].type) +
                           "); insert a cast");
  Dims o;
  std::string why;
  if (!shape::broadcastDims({in[0].dims, in[1].dims, in[2].dims}, o, &why))
    return invalidArgument("select: input dims " + dimsString(in[0].dims) + ", " +
                           dimsString(in[1].dims) + " and " + dimsString(in[2].dims) +
                           " do not broadcast (" + why + ")");
  return shape::setOutput(layer, o, in[1].type, out);
}

// The condition stays bool; x and y are moved as bytes (any type), floats in fp32.
bool Select::computeTypes(const SelectParams&, std::vector<DataType>& types, std::string& why) {
  if (types[0] != DataType::kBOOL) {
    why = std::string("kiln's Select layer takes a bool condition, not ") + dataTypeName(types[0]);
    return false;
  }
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
