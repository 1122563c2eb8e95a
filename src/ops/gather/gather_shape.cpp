// The shape and type rule of Gather (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Gather::inputs = {2, 2, "data, indices"};

Status Gather::shapeRule(const GatherParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "gather";
  const Dims& data = in[0].dims;
  const Dims& idx = in[1].dims;
  if (in[1].type != DataType::kINT32 && in[1].type != DataType::kINT64)
    return invalidArgument(std::string("gather: indices must be int32 or int64, got ") +
                           dataTypeName(in[1].type));
  if (data.nbDims < 1) return invalidArgument("gather: data must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(shape::normalizeAxis(layer, p.axis, data.nbDims, &axis));
  if (data.nbDims - 1 + idx.nbDims > Dims::kMaxDims)
    return invalidArgument("gather: data " + dimsString(data) + " and indices " + dimsString(idx) +
                           " give an output of rank " +
                           std::to_string(data.nbDims - 1 + idx.nbDims) + ", above 8");
  if (data.d[axis] == 0 && volume(idx) > 0)
    return invalidArgument("gather: data " + dimsString(data) + " is empty on axis " +
                           std::to_string(axis) + ", so no index can be valid");
  Dims o;
  for (int32_t i = 0; i < axis; ++i) o.d[o.nbDims++] = data.d[i];
  for (int32_t i = 0; i < idx.nbDims; ++i) o.d[o.nbDims++] = idx.d[i];
  for (int32_t i = axis + 1; i < data.nbDims; ++i) o.d[o.nbDims++] = data.d[i];
  return shape::setOutput(layer, o, in[0].type, out);
}

// Data moved, not computed with; the int32/int64 indices (input 1) stay as given.
bool Gather::computeTypes(const GatherParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
