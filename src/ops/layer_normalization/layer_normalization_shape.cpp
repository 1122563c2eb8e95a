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

// Scale or B (input `index`) must broadcast unidirectionally to X.shape[axis:]: trailing dims
// aligned, each 1 or the row's extent; dims before the row's (a higher rank) only 1.
Status checkParam(const Dims& x, int32_t axis, const Dims& p, const char* what) {
  const int32_t rowRank = x.nbDims - axis;
  Dims row;
  row.nbDims = rowRank;
  for (int32_t i = 0; i < rowRank; ++i) row.d[i] = x.d[axis + i];
  const std::string problem = std::string(kLayer) + ": " + what + " " + dimsString(p) +
                              " does not broadcast to the normalised dims X.shape[" +
                              std::to_string(axis) + ":] = " + dimsString(row) + " (X is " +
                              dimsString(x) + ")";
  for (int32_t i = 0; i < p.nbDims; ++i) {
    const int32_t r = i - (p.nbDims - rowRank);  // the aligned dim of the row, or < 0
    if (r < 0) {
      if (p.d[i] != 1)
        return invalidArgument(problem + ": its dim " + std::to_string(i) +
                               " lies before the axis and must be 1");
    } else if (p.d[i] != 1 && p.d[i] != row.d[r]) {
      return invalidArgument(problem + ": its dim " + std::to_string(i) + " is " +
                             std::to_string(p.d[i]) + ", expected 1 or " +
                             std::to_string(row.d[r]));
    }
  }
  return Status::ok();
}

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
  KILN_RETURN_IF_ERROR(checkParam(x, axis, in[1].dims, "Scale (input 1)"));
  if (in.size() == 3) KILN_RETURN_IF_ERROR(checkParam(x, axis, in[2].dims, "B (input 2)"));
  out.assign(1, in[0]);
  return Status::ok();
}

// FP32 (or FP16 where the builder asks for half: the kernels still take the statistics in FP32).
bool LayerNormalization::computeTypes(const LayerNormalizationParams&, std::vector<DataType>& types,
                                      std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
