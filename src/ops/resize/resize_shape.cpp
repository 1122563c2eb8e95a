// The shape and type rule of Resize (see ops/op.h).
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Resize::inputs = {1, 1, "x"};

Status Resize::shapeRule(const ResizeParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "resize";
  KILN_RETURN_IF_ERROR(shape::checkFloatInput(kLayer, in[0], 0));
  const Dims& x = in[0].dims;
  if (x.nbDims < 1) return invalidArgument("resize: input must have rank >= 1");
  if (p.outputDims.nbDims != x.nbDims)
    return invalidArgument("resize: outputDims " + dimsString(p.outputDims) + " have rank " +
                           shape::str(p.outputDims.nbDims) + " but the input " + dimsString(x) +
                           " has rank " + shape::str(x.nbDims));
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "invalid mode", p.mode));
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "invalid coordinate transform", p.coordinates));
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "invalid nearest rounding", p.rounding));
  Dims outDims = p.outputDims;
  for (int32_t i = 0; i < x.nbDims; ++i) {
    if (outDims.d[i] == -1) {
      // Follows the input: floor(input * scale), ONNX's rule for scales (as the parser computes
      // it), so that one plan resizes every input shape of a profile.
      if (!std::isfinite(p.scales[i]) || !(p.scales[i] > 0.f))
        return invalidArgument("resize: outputDims " + dimsString(p.outputDims) + " dim " +
                               shape::str(i) +
                               " is -1 (input times scale), which needs a scale > 0");
      outDims.d[i] = static_cast<int64_t>(std::floor(double(x.d[i]) * double(p.scales[i])));
      if (outDims.d[i] < 1 && x.d[i] >= 1)
        return invalidArgument("resize: scale " + std::to_string(p.scales[i]) + " of axis " +
                               shape::str(i) + " makes the input's " + shape::str(x.d[i]) +
                               " elements an empty output");
      if (x.d[i] < 1) outDims.d[i] = x.d[i];
      continue;
    }
    if (outDims.d[i] < 1)
      return invalidArgument("resize: outputDims " + dimsString(p.outputDims) + " dim " +
                             shape::str(i) + " must be > 0 (or -1: input times scale)");
    if (x.d[i] < 1 && p.outputDims.d[i] != x.d[i])
      return invalidArgument("resize: input " + dimsString(x) + " is empty along axis " +
                             shape::str(i) + ", which cannot be resized to " +
                             shape::str(p.outputDims.d[i]));
    if (!std::isfinite(p.scales[i]) || p.scales[i] < 0.f)
      return invalidArgument("resize: scale of axis " + shape::str(i) + " is " +
                             std::to_string(p.scales[i]) +
                             "; must be finite and >= 0 (0: output / input)");
  }
  return shape::setOutput(kLayer, outDims, in[0].type, out);
}

bool Resize::computeTypes(const ResizeParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
