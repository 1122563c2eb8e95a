// The 2-D window attributes (kernel_shape, strides, dilations, pads, auto_pad) of Conv,
// ConvTranspose and the pools.
#pragma once

#include "onnx/import_context.h"

namespace kiln::onnx_import {

struct Window {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  int64_t padBegin[2] = {0, 0}, padEnd[2] = {0, 0};
};

// Reads the window of a node over input dims `in` (NCHW); `transposed` leaves SAME auto_pad to
// the ConvTranspose importer; `oneD` reads 1-D attributes for a [1, k] window.
Status readWindow(NodeContext& n, const Dims& in, const std::vector<int64_t>& kernel, Window& w,
                  bool transposed = false, bool oneD = false);

// Input 0 of a windowed op; a 3-D input [N, C, L] is reshaped to [N, C, 1, L] (oneD).
Status windowInput(NodeContext& n, ITensor*& in, bool& oneD);
// Sets output 0 from `layer`, reshaped back to 3-D when oneD.
Status setWindowOutput(NodeContext& n, ILayer* layer, bool oneD);

}  // namespace kiln::onnx_import
