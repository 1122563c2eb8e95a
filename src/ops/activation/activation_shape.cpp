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

// Logical not on bool, neg and abs on integers stay as they are (exact); the rest in fp32.
bool Activation::computeTypes(const ActivationParams& p, std::vector<DataType>& types,
                              std::string& why) {
  const DataType t = types[0];
  const bool isInt = t == DataType::kINT32 || t == DataType::kINT64;
  if ((p.type == ActivationType::kNOT && t == DataType::kBOOL) ||
      (isInt && (p.type == ActivationType::kNEG || p.type == ActivationType::kABS)))
    return true;
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
