// The shape and type rule of Elementwise (see ops/op.h).
#include <string>
#include <vector>

#include "ops/elementwise/elementwise_semantics.h"
#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Elementwise::inputs = {2, 2, "a, b"};

Status Elementwise::shapeRule(const ElementwiseParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "elementwise";
  KILN_RETURN_IF_ERROR(shape::checkEnum(layer, "unknown op", p.op));
  if (in[0].type != in[1].type)
    return invalidArgument(std::string("elementwise: inputs have different types (") +
                           dataTypeName(in[0].type) + " and " + dataTypeName(in[1].type) +
                           "); insert a cast");
  const DataType t = in[0].type;
  const bool comparison = ops::elementwise::isComparison(p.op);
  if (ops::elementwise::isLogical(p.op) && t != DataType::kBOOL)
    return invalidArgument(std::string("elementwise: ") + ops::elementwise::opName(p.op) +
                           " needs bool inputs, got " + dataTypeName(t));
  if (t == DataType::kBOOL && !ops::elementwise::isDefinedOnBool(p.op))
    return invalidArgument(comparison
                               ? "elementwise: ordered comparisons are not defined on bool inputs"
                               : "elementwise: arithmetic on bool inputs is not defined");
  if (p.op == ElementwiseOp::kPRELU && !isFloatType(t))
    return invalidArgument(std::string("elementwise: prelu needs floating-point inputs, got ") +
                           dataTypeName(t));
  if (p.op == ElementwiseOp::kMOD && isFloatType(t))
    return invalidArgument(std::string("elementwise: mod (the divisor's sign) is defined on "
                                       "integers only, got ") +
                           dataTypeName(t) + "; floats take fmod (ONNX Mod with fmod=1)");

  const Dims& a = in[0].dims;
  const Dims& b = in[1].dims;
  Dims o;
  std::string why;
  if (!shape::broadcastDims({a, b}, o, &why))
    return invalidArgument("elementwise: input dims " + dimsString(a) + " and " + dimsString(b) +
                           " do not broadcast (" + why + ")");
  KILN_RETURN_IF_ERROR(shape::checkOutputDims(layer, o));
  // ONNX PRelu broadcasts the slope to x only (unidirectional): the output is x's shape.
  if (p.op == ElementwiseOp::kPRELU && o != a)
    return invalidArgument("elementwise: prelu slope dims " + dimsString(b) +
                           " do not broadcast to the input dims " + dimsString(a));
  out.assign(1, TensorShape{o, comparison ? DataType::kBOOL : t});
  return Status::ok();
}

// Integers stay integers (the kernels are exact on them) except for pow and prelu; bool only for
// equality; floats in fp32.
bool Elementwise::computeTypes(const ElementwiseParams& p, std::vector<DataType>& types,
                               std::string& why) {
  for (DataType& t : types) {
    const bool isInt = t == DataType::kINT32 || t == DataType::kINT64;
    if (isInt && p.op != ElementwiseOp::kPOW && p.op != ElementwiseOp::kPRELU) continue;
    if (t == DataType::kBOOL && ops::elementwise::isDefinedOnBool(p.op)) continue;
    std::vector<DataType> one{t};
    if (!shape::floatsInFp32(name, one, why)) return false;
    t = one[0];
  }
  return true;
}

}  // namespace kiln::ops
