// The shape and type rule of LayerNormalization (see ops/op.h): floating-point X of rank >= 1,
// Scale and an optional B that broadcast to the normalised dims X.shape[axis:]; the output is X's
// shape and type.
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {
namespace {

constexpr const char* kLayer = "layer_normalization";

}  // namespace

const InputCount LayerNormalization::inputs = {2, 3, "X, Scale[, B]"};

Status LayerNormalization::shapeRule(const LayerNormalizationParams& p, const Shapes& in,
                                     Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const Dims& x = in[0].dims;
  if (x.nbDims < 1)
    return invalidArgument(std::string(kLayer) + ": X must have rank >= 1, got a scalar");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(shape::normalizeAxis(kLayer, p.axis, x.nbDims, &axis));
  KILN_RETURN_IF_ERROR(shape::checkEpsilon(kLayer, p.epsilon));
  KILN_RETURN_IF_ERROR(shape::checkRowParam(kLayer, x, axis, in[1].dims, "Scale (input 1)"));
  if (in.size() == 3)
    KILN_RETURN_IF_ERROR(shape::checkRowParam(kLayer, x, axis, in[2].dims, "B (input 2)"));
  out.assign(1, in[0]);
  return Status::ok();
}

// FP32 (or FP16 where the builder asks for half: the kernels still take the statistics in FP32).
bool LayerNormalization::computeTypes(const LayerNormalizationParams&, std::vector<DataType>& types,
                                      std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
