// The shape and type rule of LRN (see ops/op.h).
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount LRN::inputs = {1, 1, "x"};

Status LRN::shapeRule(const LRNParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "lrn";
  KILN_RETURN_IF_ERROR(shape::checkFloatInput(kLayer, in[0], 0));
  if (in[0].dims.nbDims < 2)
    return invalidArgument("lrn: input must be [N,C,...] (rank >= 2), got " +
                           dimsString(in[0].dims));
  if (p.size < 1) return invalidArgument("lrn: size is " + shape::str(p.size) + ", must be >= 1");
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta) || !std::isfinite(p.bias))
    return invalidArgument("lrn: alpha, beta and bias must be finite");
  out.assign(1, in[0]);
  return Status::ok();
}

bool LRN::computeTypes(const LRNParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
