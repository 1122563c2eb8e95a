// Shape inference for the spatial layers that ONNX brings: resize, transposed convolution,
// instance normalisation, local response normalisation and RoiAlign.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {
namespace {

using light::dimsString;

std::string str(int64_t v) { return std::to_string(v); }

Status checkFloat(const char* layer, const TensorShape& s, size_t index) {
  if (!light::isFloatType(s.type))
    return invalidArgument(std::string(layer) + ": input " + str(static_cast<int64_t>(index)) +
                           " is " + dataTypeName(s.type) +
                           "; only fp32, fp16 and bf16 are supported");
  return Status::ok();
}

Status checkPerChannel(const char* layer, const char* what, const Dims& d, int64_t channels) {
  if (d.nbDims != 1 || d.d[0] != channels)
    return invalidArgument(std::string(layer) + ": " + what + " is " + dimsString(d) +
                           ", expected [" + str(channels) + "] (one per channel)");
  return Status::ok();
}

// One spatial axis of a transposed convolution: the output extent, which must be positive.
Status deconvAxis(const char* axis, int64_t in, int32_t kernel, int32_t stride, int32_t padBegin,
                  int32_t padEnd, int32_t dilation, int32_t outputPadding, int64_t* out) {
  const std::string where = std::string("deconvolution: ");
  if (kernel < 1)
    return invalidArgument(where + "kernel" + axis + " is " + str(kernel) + ", must be >= 1");
  if (stride < 1)
    return invalidArgument(where + "stride" + axis + " is " + str(stride) + ", must be >= 1");
  if (dilation < 1)
    return invalidArgument(where + "dilation" + axis + " is " + str(dilation) + ", must be >= 1");
  if (padBegin < 0 || padEnd < 0)
    return invalidArgument(where + "padding along " + axis + " is (" + str(padBegin) + ", " +
                           str(padEnd) + "), must be >= 0");
  if (outputPadding < 0)
    return invalidArgument(where + "output padding along " + axis + " is " + str(outputPadding) +
                           ", must be >= 0");
  if (in < 1) return invalidArgument(where + "input extent along " + axis + " is " + str(in));
  // Every term is below 2^31 * 2^60 only in theory; dims are < 2^60 and params < 2^31, and the
  // caller's checkOutputDims bounds the result, so compute in a range that cannot overflow.
  if (in > (int64_t{1} << 31))
    return invalidArgument(where + "input extent along " + axis + " is too large");
  const int64_t n = static_cast<int64_t>(stride) * (in - 1) + outputPadding +
                    static_cast<int64_t>(dilation) * (kernel - 1) + 1 - padBegin - padEnd;
  if (n < 1)
    return invalidArgument(where + "output extent along " + axis + " is " + str(n) + ": pads (" +
                           str(padBegin) + ", " + str(padEnd) + ") remove the whole output");
  *out = n;
  return Status::ok();
}

}  // namespace

Status inferResize(const ResizeParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "resize";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[0], 0));
  const Dims& x = in[0].dims;
  if (x.nbDims < 1) return invalidArgument("resize: input must have rank >= 1");
  if (p.outputDims.nbDims != x.nbDims)
    return invalidArgument("resize: outputDims " + dimsString(p.outputDims) + " have rank " +
                           str(p.outputDims.nbDims) + " but the input " + dimsString(x) +
                           " has rank " + str(x.nbDims));
  if (static_cast<int32_t>(p.mode) < 0 || static_cast<int32_t>(p.mode) > 1)
    return invalidArgument("resize: invalid mode " + str(static_cast<int32_t>(p.mode)));
  if (static_cast<int32_t>(p.coordinates) < 0 || static_cast<int32_t>(p.coordinates) > 4)
    return invalidArgument("resize: invalid coordinate transform " +
                           str(static_cast<int32_t>(p.coordinates)));
  if (static_cast<int32_t>(p.rounding) < 0 || static_cast<int32_t>(p.rounding) > 3)
    return invalidArgument("resize: invalid nearest rounding " +
                           str(static_cast<int32_t>(p.rounding)));
  for (int32_t i = 0; i < x.nbDims; ++i) {
    if (p.outputDims.d[i] < 1)
      return invalidArgument("resize: outputDims " + dimsString(p.outputDims) + " dim " + str(i) +
                             " must be > 0");
    if (x.d[i] < 1 && p.outputDims.d[i] != x.d[i])
      return invalidArgument("resize: input " + dimsString(x) + " is empty along axis " + str(i) +
                             ", which cannot be resized to " + str(p.outputDims.d[i]));
    if (!std::isfinite(p.scales[i]) || p.scales[i] < 0.f)
      return invalidArgument("resize: scale of axis " + str(i) + " is " +
                             std::to_string(p.scales[i]) +
                             "; must be finite and >= 0 (0: output / input)");
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, p.outputDims));
  out.assign(1, TensorShape{p.outputDims, in[0].type});
  return Status::ok();
}

Status inferDeconvolution(const DeconvolutionParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "deconvolution";
  if (in.size() != 2 && in.size() != 3)
    return invalidArgument("deconvolution: expects 2 or 3 inputs (x, W[, bias]), got " +
                           str(static_cast<int64_t>(in.size())));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  for (size_t i = 0; i < in.size(); ++i) KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[i], i));
  const Dims& x = in[0].dims;
  const Dims& w = in[1].dims;
  if (x.nbDims != 4)
    return invalidArgument("deconvolution: input 0 (x) must be [N,C,H,W], got " + dimsString(x));
  if (w.nbDims != 4)
    return invalidArgument("deconvolution: input 1 (weights) must be [C,K/groups,kH,kW], got " +
                           dimsString(w));
  if (p.groups < 1)
    return invalidArgument("deconvolution: groups is " + str(p.groups) + ", must be >= 1");
  if (p.outChannels < 1)
    return invalidArgument("deconvolution: outChannels is " + str(p.outChannels) +
                           ", must be >= 1");
  const int64_t channels = x.d[1];
  if (channels < 1)
    return invalidArgument("deconvolution: input has no channels: " + dimsString(x));
  if (channels % p.groups != 0)
    return invalidArgument("deconvolution: groups " + str(p.groups) + " does not divide the " +
                           str(channels) + " input channels");
  if (p.outChannels % p.groups != 0)
    return invalidArgument("deconvolution: groups " + str(p.groups) +
                           " does not divide outChannels " + str(p.outChannels));
  if (w.d[0] != channels || w.d[1] != p.outChannels / p.groups || w.d[2] != p.kernelH ||
      w.d[3] != p.kernelW)
    return invalidArgument("deconvolution: weights are " + dimsString(w) + ", expected [" +
                           str(channels) + "," + str(p.outChannels / p.groups) + "," +
                           str(p.kernelH) + "," + str(p.kernelW) +
                           "] for channels, outChannels/groups and kernel size");
  if (in.size() == 3)
    KILN_RETURN_IF_ERROR(checkPerChannel(kLayer, "bias", in[2].dims, p.outChannels));
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(deconvAxis("H", x.d[2], p.kernelH, p.strideH, p.padTop, p.padBottom,
                                  p.dilationH, p.outputPaddingH, &oh));
  KILN_RETURN_IF_ERROR(deconvAxis("W", x.d[3], p.kernelW, p.strideW, p.padLeft, p.padRight,
                                  p.dilationW, p.outputPaddingW, &ow));
  const Dims y = makeDims({x.d[0], p.outChannels, oh, ow});
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, y));
  out.assign(1, TensorShape{y, in[0].type});
  return Status::ok();
}

Status inferNormalization(const NormalizationParams& p, const std::vector<TensorShape>& in,
                          std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "normalization";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 3));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  for (size_t i = 0; i < in.size(); ++i) KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[i], i));
  const Dims& x = in[0].dims;
  if (x.nbDims < 2)
    return invalidArgument("normalization: input must be [N,C,...] (rank >= 2), got " +
                           dimsString(x));
  if (!std::isfinite(p.epsilon) || p.epsilon < 0.f)
    return invalidArgument("normalization: epsilon " + std::to_string(p.epsilon) +
                           " must be finite and >= 0");
  KILN_RETURN_IF_ERROR(checkPerChannel(kLayer, "scale (input 1)", in[1].dims, x.d[1]));
  KILN_RETURN_IF_ERROR(checkPerChannel(kLayer, "bias (input 2)", in[2].dims, x.d[1]));
  out.assign(1, in[0]);
  return Status::ok();
}

Status inferLrn(const LrnParams& p, const std::vector<TensorShape>& in,
                std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "lrn";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[0], 0));
  if (in[0].dims.nbDims < 2)
    return invalidArgument("lrn: input must be [N,C,...] (rank >= 2), got " +
                           dimsString(in[0].dims));
  if (p.size < 1) return invalidArgument("lrn: size is " + str(p.size) + ", must be >= 1");
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta) || !std::isfinite(p.bias))
    return invalidArgument("lrn: alpha, beta and bias must be finite");
  out.assign(1, in[0]);
  return Status::ok();
}

Status inferRoiAlign(const RoiAlignParams& p, const std::vector<TensorShape>& in,
                     std::vector<TensorShape>& out) {
  constexpr const char* kLayer = "roi_align";
  KILN_RETURN_IF_ERROR(light::checkInputCount(kLayer, in, 3));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(kLayer, in));
  KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[0], 0));
  KILN_RETURN_IF_ERROR(checkFloat(kLayer, in[1], 1));
  if (in[2].type != DataType::kINT32 && in[2].type != DataType::kINT64)
    return invalidArgument(std::string("roi_align: input 2 (batch_indices) is ") +
                           dataTypeName(in[2].type) + "; must be int32 or int64");
  const Dims& x = in[0].dims;
  const Dims& rois = in[1].dims;
  const Dims& idx = in[2].dims;
  if (x.nbDims != 4)
    return invalidArgument("roi_align: input 0 (X) must be [N,C,H,W], got " + dimsString(x));
  if (rois.nbDims != 2 || rois.d[1] != 4)
    return invalidArgument("roi_align: input 1 (rois) must be [R,4], got " + dimsString(rois));
  if (idx.nbDims != 1 || idx.d[0] != rois.d[0])
    return invalidArgument("roi_align: input 2 (batch_indices) is " + dimsString(idx) +
                           ", expected [" + str(rois.d[0]) + "] (one per roi)");
  if (static_cast<int32_t>(p.mode) < 0 || static_cast<int32_t>(p.mode) > 1)
    return invalidArgument("roi_align: invalid mode " + str(static_cast<int32_t>(p.mode)));
  if (p.outputHeight < 1 || p.outputWidth < 1)
    return invalidArgument("roi_align: output size " + str(p.outputHeight) + "x" +
                           str(p.outputWidth) + " must be at least 1x1");
  if (p.samplingRatio < 0)
    return invalidArgument("roi_align: sampling ratio " + str(p.samplingRatio) +
                           " must be >= 0 (0: adaptive)");
  if (!std::isfinite(p.spatialScale))
    return invalidArgument("roi_align: spatial scale must be finite");
  const Dims y = makeDims({rois.d[0], x.d[1], p.outputHeight, p.outputWidth});
  KILN_RETURN_IF_ERROR(light::checkOutputDims(kLayer, y));
  out.assign(1, TensorShape{y, in[0].type});
  return Status::ok();
}

}  // namespace kiln
