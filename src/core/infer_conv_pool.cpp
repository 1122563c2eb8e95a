// Shape inference for 2-D convolution and pooling over NCHW tensors.
#include <cstdint>
#include <string>
#include <vector>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {
namespace {

using light::dimsString;

std::string str(int64_t v) { return std::to_string(v); }

Status checkFloatInput(const char* layer, const TensorShape& s, size_t index) {
  if (!light::isFloatType(s.type))
    return invalidArgument(std::string(layer) + ": input " + std::to_string(index) + " is " +
                           dataTypeName(s.type) + "; only fp32, fp16 and bf16 are supported");
  return Status::ok();
}

Status checkRank4(const char* layer, const char* what, const Dims& d) {
  if (d.nbDims != 4)
    return invalidArgument(std::string(layer) + ": " + what + " must be rank 4, got rank " +
                           str(d.nbDims) + " " + dimsString(d));
  return Status::ok();
}

// Checks the window parameters of one spatial axis; `axis` is "H" or "W".
Status checkWindow(const char* layer, const char* axis, int32_t kernel, int32_t stride,
                   int32_t padBegin, int32_t padEnd, int32_t dilation) {
  const std::string where = std::string(layer) + ": ";
  if (kernel < 1)
    return invalidArgument(where + "kernel" + axis + " is " + str(kernel) + ", must be >= 1");
  if (stride < 1)
    return invalidArgument(where + "stride" + axis + " is " + str(stride) + ", must be >= 1");
  if (dilation < 1)
    return invalidArgument(where + "dilation" + axis + " is " + str(dilation) + ", must be >= 1");
  if (padBegin < 0 || padEnd < 0)
    return invalidArgument(where + "padding along " + axis + " is (" + str(padBegin) + ", " +
                           str(padEnd) + "), must be >= 0");
  return Status::ok();
}

// Output extent of a sliding window along one axis; fails when the (dilated) window does not
// fit in the padded input at least once.
Status windowOutput(const char* layer, const char* axis, int64_t in, int32_t kernel, int32_t stride,
                    int32_t padBegin, int32_t padEnd, int32_t dilation, bool ceilMode,
                    int64_t* out) {
  const int64_t padded = in + padBegin + padEnd;
  const int64_t extent = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  if (padded < extent)
    return invalidArgument(std::string(layer) + ": kernel extent " + str(extent) + " along " +
                           axis + " is larger than the padded input " + str(padded) + " (" +
                           str(in) + " + pads " + str(padBegin) + ", " + str(padEnd) + ")");
  int64_t n = (padded - extent) / stride + 1;
  if (ceilMode) {
    n = (padded - extent + stride - 1) / stride + 1;
    // ONNX/PyTorch rule: a last window that would start in the end padding is not produced.
    if ((n - 1) * stride >= in + padBegin) --n;
  }
  *out = n;
  return Status::ok();
}

}  // namespace

Status inferConvolution(const ConvolutionParams& p, const std::vector<TensorShape>& in,
                        std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "convolution";
  if (in.size() != 2 && in.size() != 3)
    return invalidArgument(std::string(kLayer) + ": expects 2 or 3 inputs (x, W[, bias]), got " +
                           std::to_string(in.size()));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  for (size_t i = 0; i < in.size(); ++i) KILN_RETURN_IF_ERROR(checkFloatInput(kLayer, in[i], i));
  const Dims& x = in[0].dims;
  const Dims& w = in[1].dims;
  KILN_RETURN_IF_ERROR(checkRank4(kLayer, "input 0 (x, [N,C,H,W])", x));
  KILN_RETURN_IF_ERROR(checkRank4(kLayer, "input 1 (weights, [K,C/groups,kH,kW])", w));
  KILN_RETURN_IF_ERROR(
      checkWindow(kLayer, "H", p.kernelH, p.strideH, p.padTop, p.padBottom, p.dilationH));
  KILN_RETURN_IF_ERROR(
      checkWindow(kLayer, "W", p.kernelW, p.strideW, p.padLeft, p.padRight, p.dilationW));
  const std::string where = std::string(kLayer) + ": ";
  if (p.groups < 1) return invalidArgument(where + "groups is " + str(p.groups) + ", must be >= 1");
  if (p.outChannels < 1)
    return invalidArgument(where + "outChannels is " + str(p.outChannels) + ", must be >= 1");
  const int64_t channels = x.d[1];
  if (channels < 1) return invalidArgument(where + "input has no channels: " + dimsString(x));
  if (channels % p.groups != 0)
    return invalidArgument(where + "groups " + str(p.groups) + " does not divide the " +
                           str(channels) + " input channels");
  if (p.outChannels % p.groups != 0)
    return invalidArgument(where + "groups " + str(p.groups) + " does not divide outChannels " +
                           str(p.outChannels));
  if (w.d[0] != p.outChannels || w.d[1] != channels / p.groups || w.d[2] != p.kernelH ||
      w.d[3] != p.kernelW)
    return invalidArgument(where + "weights are " + dimsString(w) + ", expected [" +
                           str(p.outChannels) + "," + str(channels / p.groups) + "," +
                           str(p.kernelH) + "," + str(p.kernelW) +
                           "] for outChannels, channels/groups and kernel size");
  if (in.size() == 3) {
    const Dims& b = in[2].dims;
    if (b.nbDims != 1 || b.d[0] != p.outChannels)
      return invalidArgument(where + "bias is " + dimsString(b) + ", expected [" +
                             str(p.outChannels) + "]");
  }
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(windowOutput(kLayer, "H", x.d[2], p.kernelH, p.strideH, p.padTop,
                                    p.padBottom, p.dilationH, false, &oh));
  KILN_RETURN_IF_ERROR(windowOutput(kLayer, "W", x.d[3], p.kernelW, p.strideW, p.padLeft,
                                    p.padRight, p.dilationW, false, &ow));
  TensorShape y;
  y.dims = makeDims({x.d[0], p.outChannels, oh, ow});
  y.type = in[0].type;
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, y.dims));
  out.assign(1, y);
  return Status::ok();
}

Status inferPooling(const PoolingParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "pooling";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloatInput(kLayer, in[0], 0));
  const Dims& x = in[0].dims;
  KILN_RETURN_IF_ERROR(checkRank4(kLayer, "input 0 ([N,C,H,W])", x));
  const std::string where = std::string(kLayer) + ": ";
  if (x.d[2] < 1 || x.d[3] < 1)
    return invalidArgument(where + "input " + dimsString(x) + " has an empty spatial extent");
  TensorShape y;
  y.type = in[0].type;
  switch (p.type) {
    case PoolingType::kGLOBAL_MAX:
    case PoolingType::kGLOBAL_AVERAGE:
      y.dims = makeDims({x.d[0], x.d[1], 1, 1});
      out.assign(1, y);
      return Status::ok();
    case PoolingType::kMAX:
    case PoolingType::kAVERAGE:
      break;
    default:
      return invalidArgument(where + "unknown pooling type " +
                             std::to_string(static_cast<int32_t>(p.type)));
  }
  KILN_RETURN_IF_ERROR(checkWindow(kLayer, "H", p.kernelH, p.strideH, p.padTop, p.padBottom, 1));
  KILN_RETURN_IF_ERROR(checkWindow(kLayer, "W", p.kernelW, p.strideW, p.padLeft, p.padRight, 1));
  // A pad as large as the kernel would allow windows made only of padding (no max, no average).
  if (p.padTop >= p.kernelH || p.padBottom >= p.kernelH || p.padLeft >= p.kernelW ||
      p.padRight >= p.kernelW)
    return invalidArgument(where + "padding (top " + str(p.padTop) + ", bottom " +
                           str(p.padBottom) + ", left " + str(p.padLeft) + ", right " +
                           str(p.padRight) + ") must be smaller than the kernel " + str(p.kernelH) +
                           "x" + str(p.kernelW));
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(windowOutput(kLayer, "H", x.d[2], p.kernelH, p.strideH, p.padTop,
                                    p.padBottom, 1, p.ceilMode, &oh));
  KILN_RETURN_IF_ERROR(windowOutput(kLayer, "W", x.d[3], p.kernelW, p.strideW, p.padLeft,
                                    p.padRight, 1, p.ceilMode, &ow));
  y.dims = makeDims({x.d[0], x.d[1], oh, ow});
  out.assign(1, y);
  return Status::ok();
}

}  // namespace kiln
