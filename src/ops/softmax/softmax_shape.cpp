// The shape and type rule of Softmax (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Softmax::inputs = {1, 1, "x"};

Status Softmax::shapeRule(const SoftmaxParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "softmax";
  if (!isFloatType(in[0].type))
    return invalidArgument(std::string("softmax: needs a floating-point input, got ") +
                           dataTypeName(in[0].type));
  if (in[0].dims.nbDims < 1) return invalidArgument("softmax: input must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(shape::normalizeAxis(layer, p.axis, in[0].dims.nbDims, &axis));
  out.assign(1, in[0]);
  return Status::ok();
}

bool Softmax::computeTypes(const SoftmaxParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
