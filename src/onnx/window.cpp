// The 2-D window attributes shared by Conv, ConvTranspose and the pools.
#include "onnx/window.h"

namespace kiln::onnx_import {

// Reads kernel_shape/strides/dilations/pads/auto_pad for a 2-D window over `in` (NCHW).
Status readWindow(NodeContext& n, const Dims& in, const std::vector<int64_t>& kernel, Window& w,
                  bool transposed, bool oneD) {
  if (kernel.size() != 2) return n.unsupportedError("only 2-D windows are supported");
  auto strides = n.attrInts("strides", {1, 1});
  auto dil = n.attrInts("dilations", {1, 1});
  auto pads = n.attrInts("pads", {0, 0, 0, 0});
  if (oneD) {  // a 1-D window runs as [1, k] over [N, C, 1, L]
    if (!n.attr("strides")) strides = {1};
    if (!n.attr("dilations")) dil = {1};
    if (!n.attr("pads")) pads = {0, 0};
    if (strides.size() != 1 || dil.size() != 1 || pads.size() != 2)
      return n.error("strides, dilations and pads must have 1, 1 and 2 values");
    strides = {1, strides[0]};
    dil = {1, dil[0]};
    pads = {0, pads[0], 0, pads[1]};
  }
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return n.error("strides, dilations and pads must have 2, 2 and 4 values");
  for (int k = 0; k < 2; ++k) {
    w.kernel[k] = kernel[k];
    w.stride[k] = strides[k];
    w.dilation[k] = dil[k];
    w.padBegin[k] = pads[k];
    w.padEnd[k] = pads[k + 2];
    if (w.kernel[k] < 1 || w.stride[k] < 1 || w.dilation[k] < 1 || pads[k] < 0 || pads[k + 2] < 0)
      return n.error("kernel, strides and dilations must be positive and pads non-negative");
  }
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    for (int k = 0; k < 2; ++k) w.padBegin[k] = w.padEnd[k] = 0;
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (transposed) return Status::ok();  // handled by the ConvTranspose importer
    for (int k = 0; k < 2; ++k) {
      const int64_t size = in.d[2 + k];
      const int64_t out = (size + w.stride[k] - 1) / w.stride[k];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * w.stride[k] + (w.kernel[k] - 1) * w.dilation[k] + 1 - size);
      const int64_t small = total / 2;
      w.padBegin[k] = autoPad == "SAME_UPPER" ? small : total - small;
      w.padEnd[k] = total - w.padBegin[k];
    }
    // The layer keeps the pads literally.
    KILN_RETURN_IF_ERROR(n.literal("its SAME pads (begin then end, per axis)",
                                   {w.padBegin[0], w.padBegin[1], w.padEnd[0], w.padEnd[1]}));
  } else if (autoPad != "NOTSET") {
    return n.error("unknown auto_pad '" + autoPad + "'");
  }
  return Status::ok();
}

Status windowInput(NodeContext& n, ITensor*& in, bool& oneD) {
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  const Dims x = in->getDimensions();
  oneD = x.nbDims == 3;
  if (x.nbDims != 3 && x.nbDims != 4)
    return n.unsupportedError("only 1-D and 2-D windows (3-D and 4-D inputs) are supported");
  if (!oneD) return Status::ok();
  ILayer* r = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*in, makeDims({x.d[0], x.d[1], 1, x.d[2]}), r));
  in = r->getOutput(0);
  return Status::ok();
}

Status setWindowOutput(NodeContext& n, ILayer* layer, bool oneD) {
  if (!layer) return n.layerError();
  if (!oneD) return n.setLayerOutputs(layer);
  const Dims y = layer->getOutput(0)->getDimensions();
  ILayer* r = nullptr;
  KILN_RETURN_IF_ERROR(n.reshape(*layer->getOutput(0), makeDims({y.d[0], y.d[1], y.d[3]}), r));
  return n.setLayerOutputs(r);
}

}  // namespace kiln::onnx_import
