// Shape and type inference for the per-element layers: elementwise (two inputs, numpy
// broadcasting) and activation (one input).
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
      op > static_cast<int32_t>(ElementwiseOp::kPOW))
    return invalidArgument("elementwise: unknown op " + std::to_string(op));
  if (in[0].type != in[1].type)
    return invalidArgument(std::string("elementwise: inputs have different types (") +
                           dataTypeName(in[0].type) + " and " + dataTypeName(in[1].type) +
                           "); insert a cast");
  // No logical ops exist yet, and arithmetic on bool has no agreed meaning.
  if (in[0].type == DataType::kBOOL)
    return invalidArgument("elementwise: arithmetic on bool inputs is not defined");

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
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

Status inferActivation(const ActivationParams& p, const std::vector<TensorShape>& in,
                       std::vector<TensorShape>& out) {
  const char* layer = "activation";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const int32_t t = static_cast<int32_t>(p.type);
  if (t < static_cast<int32_t>(ActivationType::kRELU) ||
      t > static_cast<int32_t>(ActivationType::kHARD_SWISH))
    return invalidArgument("activation: unknown activation type " + std::to_string(t));
  if (!light::isFloatType(in[0].type))
    return invalidArgument(std::string("activation: needs a floating-point input, got ") +
                           dataTypeName(in[0].type));
  out.assign(1, in[0]);
  return Status::ok();
}

}  // namespace kiln
