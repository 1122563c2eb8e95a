// The shape and type rule of Normalization (see ops/op.h).
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/row_normalization_shape.h"

namespace kiln::ops {

const InputCount Normalization::inputs = {3, 3, "x, scale, bias"};

Status Normalization::shapeRule(const NormalizationParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "normalization";
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const Dims& x = in[0].dims;
  if (x.nbDims < 2)
    return invalidArgument("normalization: input must be [N,C,...] (rank >= 2), got " +
                           dimsString(x));
  KILN_RETURN_IF_ERROR(shape::checkEpsilon(kLayer, p.epsilon));
  return shape::perChannelParams(kLayer, in, "scale (input 1)", "bias (input 2)", out);
}

bool Normalization::computeTypes(const NormalizationParams&, std::vector<DataType>& types,
                                 std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
