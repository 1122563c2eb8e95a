// Shape and type inference for the per-element layers: elementwise (two inputs, numpy
// broadcasting; comparisons give bool) and activation (one input).
#include <string>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {

Status inferElementwise(const ElementwiseParams& p, const std::vector<TensorShape>& in,
                        std::vector<TensorShape>& out) {
  const char* layer = "elementwise";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 2));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const int32_t op = static_cast<int32_t>(p.op);
  if (op < static_cast<int32_t>(ElementwiseOp::kADD) ||
      op > static_cast<int32_t>(ElementwiseOp::kPRELU))
    return invalidArgument("elementwise: unknown op " + std::to_string(op));
  if (in[0].type != in[1].type)
    return invalidArgument(std::string("elementwise: inputs have different types (") +
                           dataTypeName(in[0].type) + " and " + dataTypeName(in[1].type) +
                           "); insert a cast");
  const DataType t = in[0].type;
  const bool comparison = p.op == ElementwiseOp::kEQUAL || p.op == ElementwiseOp::kLESS ||
                          p.op == ElementwiseOp::kGREATER;
  if (t == DataType::kBOOL && p.op != ElementwiseOp::kEQUAL)
    return invalidArgument(comparison ? "elementwise: less/greater are not defined on bool inputs"
                                      : "elementwise: arithmetic on bool inputs is not defined");
  if (p.op == ElementwiseOp::kPRELU && !light::isFloatType(t))
    return invalidArgument(std::string("elementwise: prelu needs floating-point inputs, got ") +
                           dataTypeName(t));

  // numpy rules: align trailing dims; a dim of 1 stretches to the other (0 included).
  const Dims& a = in[0].dims;
  const Dims& b = in[1].dims;
  Dims o;
  o.nbDims = a.nbDims > b.nbDims ? a.nbDims : b.nbDims;
  for (int32_t i = 0; i < o.nbDims; ++i) {
    const int32_t ia = i - (o.nbDims - a.nbDims);
    const int32_t ib = i - (o.nbDims - b.nbDims);
    const int64_t da = ia >= 0 ? a.d[ia] : 1;
    const int64_t db = ib >= 0 ? b.d[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return invalidArgument("elementwise: input dims " + light::dimsString(a) + " and " +
                             light::dimsString(b) + " do not broadcast (output dim " +
                             std::to_string(i) + ": " + std::to_string(da) + " vs " +
                             std::to_string(db) + ")");
    o.d[i] = da == 1 ? db : da;
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  // ONNX PRelu broadcasts the slope to x only (unidirectional): the output is x's shape.
  if (p.op == ElementwiseOp::kPRELU && o != a)
    return invalidArgument("elementwise: prelu slope dims " + light::dimsString(b) +
                           " do not broadcast to the input dims " + light::dimsString(a));
  out.assign(1, TensorShape{o, comparison ? DataType::kBOOL : t});
  return Status::ok();
}

Status inferActivation(const ActivationParams& p, const std::vector<TensorShape>& in,
                       std::vector<TensorShape>& out) {
  const char* layer = "activation";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const int32_t t = static_cast<int32_t>(p.type);
  if (t < static_cast<int32_t>(ActivationType::kRELU) ||
      t > static_cast<int32_t>(ActivationType::kNOT))
    return invalidArgument("activation: unknown activation type " + std::to_string(t));
  const DataType type = in[0].type;
  if (p.type == ActivationType::kNOT) {
    if (type != DataType::kBOOL)
      return invalidArgument(std::string("activation: not needs a bool input, got ") +
                             dataTypeName(type));
  } else if (p.type == ActivationType::kNEG || p.type == ActivationType::kABS) {
    // Exact on integers too (ONNX Neg/Abs take them); int8 is quantized and excluded.
    if (!light::isFloatType(type) && type != DataType::kINT32 && type != DataType::kINT64)
      return invalidArgument(
          std::string("activation: neg/abs need a floating-point, int32 or int64 input, got ") +
          dataTypeName(type));
  } else if (!light::isFloatType(type)) {
    return invalidArgument(std::string("activation: needs a floating-point input, got ") +
                           dataTypeName(type));
  }
  out.assign(1, in[0]);
  return Status::ok();
}

}  // namespace kiln
