// The shape and type rule of LayerNormalization (see ops/op.h): floating-point X of rank >= 1,
// Scale and an optional B that broadcast to the normalised dims X.shape[axis:]; the output is X's
// shape and type.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/row_normalization_shape.h"

namespace kiln::ops {
const InputCount LayerNormalization::inputs = {2, 3, "X, Scale[, B]"};

Status LayerNormalization::shapeRule(const LayerNormalizationParams& p, const Shapes& in,
                                     Shapes& out) {
  return shape::rowNormalizationRule("layer_normalization", p.axis, p.epsilon, in, out);
}

// FP32 (or FP16 where the builder asks for half: the kernels still take the statistics in FP32).
bool LayerNormalization::computeTypes(const LayerNormalizationParams&, std::vector<DataType>& types,
                                      std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
