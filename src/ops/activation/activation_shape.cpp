// The shape and type rule of Activation (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Activation::inputs = {1, 1, "x"};

Status Activation::shapeRule(const ActivationParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkEnum("activation", "unknown activation type", p.type));
  const DataType type = in[0].type;
  if (p.type == ActivationType::kNOT) {
    if (type != DataType::kBOOL)
      return invalidArgument(std::string("activation: not needs a bool input, got ") +
                             dataTypeName(type));
  } else if (p.type == ActivationType::kNEG || p.type == ActivationType::kABS) {
    // Exact on integers too (ONNX Neg/Abs take them); int8 is quantized and excluded.
    if (!isFloatType(type) && type != DataType::kINT32 && type != DataType::kINT64)
      return invalidArgument(
          std::string("activation: neg/abs need a floating-point, int32 or int64 input, got ") +
          dataTypeName(type));
  } else if (!isFloatType(type)) {
    return invalidArgument(std::string("activation: needs a floating-point input, got ") +
                           dataTypeName(type));
  }
  out.assign(1, in[0]);
  return Status::ok();
}

}  // namespace kiln::ops
