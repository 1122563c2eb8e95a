// The shape and type rule of Deconvolution (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"
#include "ops/window_shape.h"

namespace kiln::ops {
namespace {

constexpr const char* kLayer = "deconvolution";

// One spatial axis of a transposed convolution: the output extent, which must be positive. The
// window parameters are checked as convolution's.
Status deconvAxis(const char* axis, int64_t in, int32_t kernel, int32_t stride, int32_t padBegin,
                  int32_t padEnd, int32_t dilation, int32_t outputPadding, int64_t* out) {
  KILN_RETURN_IF_ERROR(
      shape::checkWindow(kLayer, axis, kernel, stride, padBegin, padEnd, dilation));
  const std::string where = std::string(kLayer) + ": ";
  if (outputPadding < 0)
    return invalidArgument(where + "output padding along " + axis + " is " +
                           shape::str(outputPadding) + ", must be >= 0");
  if (in < 1)
    return invalidArgument(where + "input extent along " + axis + " is " + shape::str(in));
  // Every term is below 2^31 * 2^60 only in theory; dims are < 2^60 and params < 2^31, and the
  // caller's checkOutputDims bounds the result, so compute in a range that cannot overflow.
  if (in > (int64_t{1} << 31))
    return invalidArgument(where + "input extent along " + axis + " is too large");
  const int64_t n = static_cast<int64_t>(stride) * (in - 1) + outputPadding +
                    static_cast<int64_t>(dilation) * (kernel - 1) + 1 - padBegin - padEnd;
  if (n < 1)
    return invalidArgument(where + "output extent along " + axis + " is " + shape::str(n) +
                           ": pads (" + shape::str(padBegin) + ", " + shape::str(padEnd) +
                           ") remove the whole output");
  *out = n;
  return Status::ok();
}

}  // namespace

const InputCount Deconvolution::inputs = {2, 3, "x, W[, bias]"};

Status Deconvolution::shapeRule(const DeconvolutionParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  const Dims& x = in[0].dims;
  const Dims& w = in[1].dims;
  if (x.nbDims != 4)
    return invalidArgument("deconvolution: input 0 (x) must be [N,C,H,W], got " + dimsString(x));
  if (w.nbDims != 4)
    return invalidArgument("deconvolution: input 1 (weights) must be [C,K/groups,kH,kW], got " +
                           dimsString(w));
  KILN_RETURN_IF_ERROR(shape::checkGroups(kLayer, p.groups, p.outChannels, x));
  const int64_t channels = x.d[1];
  if (w.d[0] != channels || w.d[1] != p.outChannels / p.groups || w.d[2] != p.kernelH ||
      w.d[3] != p.kernelW)
    return invalidArgument("deconvolution: weights are " + dimsString(w) + ", expected [" +
                           shape::str(channels) + "," + shape::str(p.outChannels / p.groups) + "," +
                           shape::str(p.kernelH) + "," + shape::str(p.kernelW) +
                           "] for channels, outChannels/groups and kernel size");
  if (in.size() == 3)
    KILN_RETURN_IF_ERROR(shape::checkPerChannel(kLayer, "bias", in[2].dims, p.outChannels));
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(deconvAxis("H", x.d[2], p.kernelH, p.strideH, p.padTop, p.padBottom,
                                  p.dilationH, p.outputPaddingH, &oh));
  KILN_RETURN_IF_ERROR(deconvAxis("W", x.d[3], p.kernelW, p.strideW, p.padLeft, p.padRight,
                                  p.dilationW, p.outputPaddingW, &ow));
  const Dims y = makeDims({x.d[0], p.outChannels, oh, ow});
  return shape::setOutput(kLayer, y, in[0].type, out);
}

bool Deconvolution::computeTypes(const DeconvolutionParams&, std::vector<DataType>& types,
                                 std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
