// The shape and type rule of Convolution (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"
#include "ops/window_shape.h"

namespace kiln::ops {

const InputCount Convolution::inputs = {2, 3, "x, W[, bias]"};

Status Convolution::shapeRule(const ConvolutionParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "convolution";
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
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
  if (in.size() == 3) {
    const Dims& b = in[2].dims;
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
  return shape::setOutput(kLayer, y.dims, y.type, out);
}

bool Convolution::computeTypes(const ConvolutionParams&, std::vector<DataType>& types,
                               std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
