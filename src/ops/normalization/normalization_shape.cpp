// The shape and type rule of Normalization (see ops/op.h).
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

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
  KILN_RETURN_IF_ERROR(shape::checkPerChannel(kLayer, "scale (input 1)", in[1].dims, x.d[1]));
  KILN_RETURN_IF_ERROR(shape::checkPerChannel(kLayer, "bias (input 2)", in[2].dims, x.d[1]));
  out.assign(1, in[0]);
  return Status::ok();
}

bool Normalization::computeTypes(const NormalizationParams&, std::vector<DataType>& types,
                                 std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
