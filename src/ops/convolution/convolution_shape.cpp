// The shape and type rule of Convolution (see ops/op.h): x [N,C,H,W], W [K,C/groups,kH,kW],
// bias [K], residual of the output's shape (kiln/ops/convolution.h), all of one float type.
#include <string>
#include <vector>

#include "ops/convolution/convolution_semantics.h"
#include "ops/op.h"
#include "ops/shape_checks.h"
#include "ops/window_shape.h"

namespace kiln::ops {

const InputCount Convolution::inputs = {2, 4, "x, W[, bias][, residual]"};

Status Convolution::shapeRule(const ConvolutionParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "convolution";
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "unknown activation type", p.activation));
  if (p.hasActivation && p.activation == ActivationType::kNOT)
    return invalidArgument(std::string(kLayer) +
                           ": the activation must have a float form; not is logical");
  if (in.size() == 4 && !p.hasResidual)
    return invalidArgument(std::string(kLayer) +
                           ": 4 inputs (x, W, bias, residual) need hasResidual; got 4 without it");
  if (p.hasResidual && in.size() < 3)
    return invalidArgument(std::string(kLayer) + ": hasResidual needs the residual as the last " +
                           "input (x, W[, bias], residual); got " + std::to_string(in.size()) +
                           " inputs");
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const convolution::InputSlots slots(p, static_cast<int64_t>(in.size()));
  if (slots.residual >= 0 && in[static_cast<size_t>(slots.residual)].type != in[0].type)
    return invalidArgument(std::string(kLayer) + ": residual (input " +
                           std::to_string(slots.residual) + ") is " +
                           dataTypeName(in[static_cast<size_t>(slots.residual)].type) +
                           " but x is " + dataTypeName(in[0].type) + "; they must have one type");
  const Dims& x = in[0].dims;
  const Dims& w = in[1].dims;
  KILN_RETURN_IF_ERROR(shape::checkRank4(kLayer, "input 0 (x, [N,C,H,W])", x));
  KILN_RETURN_IF_ERROR(shape::checkRank4(kLayer, "input 1 (weights, [K,C/groups,kH,kW])", w));
  KILN_RETURN_IF_ERROR(
      shape::checkWindow(kLayer, "H", p.kernelH, p.strideH, p.padTop, p.padBottom, p.dilationH));
  KILN_RETURN_IF_ERROR(
      shape::checkWindow(kLayer, "W", p.kernelW, p.strideW, p.padLeft, p.padRight, p.dilationW));
  KILN_RETURN_IF_ERROR(shape::checkGroups(kLayer, p.groups, p.outChannels, x));
  const std::string where = std::string(kLayer) + ": ";
  const int64_t channels = x.d[1];
  if (w.d[0] != p.outChannels || w.d[1] != channels / p.groups || w.d[2] != p.kernelH ||
      w.d[3] != p.kernelW)
    return invalidArgument(where + "weights are " + dimsString(w) + ", expected [" +
                           shape::str(p.outChannels) + "," + shape::str(channels / p.groups) + "," +
                           shape::str(p.kernelH) + "," + shape::str(p.kernelW) +
                           "] for outChannels, channels/groups and kernel size");
  if (slots.bias >= 0) {
    const Dims& b = in[static_cast<size_t>(slots.bias)].dims;
    if (b.nbDims != 1 || b.d[0] != p.outChannels)
      return invalidArgument(where + "bias is " + dimsString(b) + ", expected [" +
                             shape::str(p.outChannels) + "]");
  }
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(shape::windowOutput(kLayer, "H", x.d[2], p.kernelH, p.strideH, p.padTop,
                                           p.padBottom, p.dilationH, false, &oh));
  KILN_RETURN_IF_ERROR(shape::windowOutput(kLayer, "W", x.d[3], p.kernelW, p.strideW, p.padLeft,
                                           p.padRight, p.dilationW, false, &ow));
  TensorShape y;
  y.dims = makeDims({x.d[0], p.outChannels, oh, ow});
  y.type = in[0].type;
  if (slots.residual >= 0 && in[static_cast<size_t>(slots.residual)].dims != y.dims)
    return invalidArgument(where + "residual (input " + std::to_string(slots.residual) + ") is " +
                           dimsString(in[static_cast<size_t>(slots.residual)].dims) +
                           " but the output is " + dimsString(y.dims) +
                           "; the residual must have exactly the output's shape");
  return shape::setOutput(kLayer, y.dims, y.type, out);
}

bool Convolution::computeTypes(const ConvolutionParams&, std::vector<DataType>& types,
                               std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
