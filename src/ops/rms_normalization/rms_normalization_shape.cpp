// The shape and type rule of RMSNormalization (see ops/op.h): floating-point X of rank >= 1 and a
// Scale that broadcasts to the normalised dims X.shape[axis:] (LayerNormalization's rule); the
// output is X's shape and type.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/row_normalization_shape.h"

namespace kiln::ops {
const InputCount RMSNormalization::inputs = {2, 2, "X, Scale"};

Status RMSNormalization::shapeRule(const RMSNormalizationParams& p, const Shapes& in, Shapes& out) {
  return shape::rowNormalizationRule("rms_normalization", p.axis, p.epsilon, in,
                                     out);  // two inputs: no B
}

// FP32 (or FP16 where the builder asks for half: the kernels still sum the squares in FP32).
bool RMSNormalization::computeTypes(const RMSNormalizationParams&, std::vector<DataType>& types,
                                    std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
