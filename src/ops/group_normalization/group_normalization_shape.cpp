// The shape and type rule of GroupNormalization (see ops/op.h): floating-point X [N, C, ...] of
// rank >= 2 with C a multiple of numGroups, Scale [C] and B [C]; the output is X's shape and type.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/row_normalization_shape.h"

namespace kiln::ops {
namespace {

constexpr const char* kLayer = "group_normalization";

}  // namespace

const InputCount GroupNormalization::inputs = {3, 3, "X, Scale, B"};

Status GroupNormalization::shapeRule(const GroupNormalizationParams& p, const Shapes& in,
                                     Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const Dims& x = in[0].dims;
  if (x.nbDims < 2)
    return invalidArgument(std::string(kLayer) + ": X must be [N, C, ...] (rank >= 2), got " +
                           dimsString(x));
  KILN_RETURN_IF_ERROR(shape::checkEpsilon(kLayer, p.epsilon));
  const int64_t channels = x.d[1];
  if (p.numGroups < 1)
    return invalidArgument(std::string(kLayer) + ": numGroups " + std::to_string(p.numGroups) +
                           " must be >= 1");
  if (channels % p.numGroups != 0)
    return invalidArgument(std::string(kLayer) + ": the " + std::to_string(channels) +
                           " channels of X " + dimsString(x) + " do not split into " +
                           std::to_string(p.numGroups) + " groups");
  return shape::perChannelParams(kLayer, in, "Scale (input 1)", "B (input 2)", out);
}

// FP32 (or FP16 where the builder asks for half: the kernels still take the statistics in FP32).
bool GroupNormalization::computeTypes(const GroupNormalizationParams&, std::vector<DataType>& types,
                                      std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
