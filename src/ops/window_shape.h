// The sliding window of convolution, deconvolution and pooling along one spatial axis: its
// parameters checked, and its output extent; and the channel groups of (de)convolution.
#pragma once

#include <cstdint>
#include <string>

#include "ops/shape_checks.h"

namespace kiln::shape {

// Checks the window parameters of one spatial axis; `axis` is "H" or "W".
inline Status checkWindow(const char* layer, const char* axis, int32_t kernel, int32_t stride,
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

// The channel groups of convolution and deconvolution: groups and outChannels at least 1, and
// groups dividing both the input channels (x is [N,C,H,W]) and outChannels.
inline Status checkGroups(const char* layer, int32_t groups, int32_t outChannels, const Dims& x) {
  const std::string where = std::string(layer) + ": ";
  if (groups < 1) return invalidArgument(where + "groups is " + str(groups) + ", must be >= 1");
  if (outChannels < 1)
    return invalidArgument(where + "outChannels is " + str(outChannels) + ", must be >= 1");
  const int64_t channels = x.d[1];
  if (channels < 1) return invalidArgument(where + "input has no channels: " + dimsString(x));
  if (channels % groups != 0)
    return invalidArgument(where + "groups " + str(groups) + " does not divide the " +
                           str(channels) + " input channels");
  if (outChannels % groups != 0)
    return invalidArgument(where + "groups " + str(groups) + " does not divide outChannels " +
                           str(outChannels));
  return Status::ok();
}

// Output extent of a sliding window along one axis; fails when the (dilated) window does not
// fit in the padded input at least once.
inline Status windowOutput(const char* layer, const char* axis, int64_t in, int32_t kernel,
                           int32_t stride, int32_t padBegin, int32_t padEnd, int32_t dilation,
                           bool ceilMode, int64_t* out) {
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

}  // namespace kiln::shape
