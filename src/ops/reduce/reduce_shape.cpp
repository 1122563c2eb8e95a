// The shape and type rule of Reduce (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Reduce::inputs = {1, 1, "x"};

Status Reduce::shapeRule(const ReduceParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkEnum("reduce", "unknown op", p.op));
  const bool argmax = p.op == ReduceOp::kARGMAX;
  const DataType t = in[0].type;
  if (argmax ? !(isFloatType(t) || t == DataType::kINT32 || t == DataType::kINT64)
             : !isFloatType(t))
    return invalidArgument(std::string("reduce: needs a floating-point") +
                           (argmax ? ", int32 or int64" : "") + " input, got " + dataTypeName(t));
  const Dims& d = in[0].dims;
  if (p.axesMask == 0) return invalidArgument("reduce: axesMask is 0: no axis to reduce");
  if (argmax && (p.axesMask & (p.axesMask - 1)) != 0)
    return invalidArgument("reduce: argmax needs exactly one axis, axesMask is " +
                           std::to_string(p.axesMask));
  for (int32_t bit = 31; bit >= d.nbDims; --bit)
    if ((p.axesMask >> bit) & 1u)
      return invalidArgument("reduce: axesMask names axis " + std::to_string(bit) +
                             " but the input dims " + dimsString(d) + " have rank " +
                             std::to_string(d.nbDims));
  Dims o;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const bool reduced = (p.axesMask >> i) & 1u;
    if (!reduced)
      o.d[o.nbDims++] = d.d[i];
    else if (p.keepDims)
      o.d[o.nbDims++] = 1;
    // The index of the maximum of nothing does not exist.
    if (argmax && reduced && d.d[i] == 0)
      return invalidArgument("reduce: argmax over axis " + std::to_string(i) +
                             " of size 0 in dims " + dimsString(d));
  }
  out.assign(1, TensorShape{o, argmax ? DataType::kINT64 : t});
  return Status::ok();
}

// Argmax compares integers exactly (no detour through fp32; its output is int64); the rest in
// fp32.
bool Reduce::computeTypes(const ReduceParams& p, std::vector<DataType>& types, std::string& why) {
  if (p.op == ReduceOp::kARGMAX && (types[0] == DataType::kINT32 || types[0] == DataType::kINT64))
    return true;
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
