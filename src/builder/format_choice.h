// The format decision for built-in layers: which of a layer's tensors are linear and which
// channels-last (NHWC), as the lowering (lowering.cpp) asks for them. A CNN on the GPU runs fastest
// with its activations NHWC end to end: cuDNN's tensor-core convolutions and the 1x1 convolutions
// as cuBLASLt products want NHWC, and with NCHW tensors cuDNN transposes around each convolution.
//
// Decisions (greedy, layer by layer in graph order, each a candidate that some kernel of the
// target must accept, else the next; the last candidate is always all linear):
// - The CPU backend's kernels are linear only: every candidate there is linear.
// - A CUDA convolution goes channels-last when it computes in FP16/BF16 (the tensor-core path) or
//   its input already is channels-last: x, the residual and the output NHWC, and its constant
//   weights NHWC too (converted once at build time, never per enqueue); failing that, with linear
//   weights (cuDNN's tactic then packs them per run).
// - Any other layer follows its inputs: channels-last for its rank-4 float inputs that are computed
//   (not constants, which stay linear: a [1,C,1,1] bias has the same bytes either way) and its
//   rank-4 float outputs, when at least one computed rank-4 input already is channels-last. Layers
//   whose kernels take linear tensors only (reshapes, products) decline, and the builder's
//   reformat brings the tensor back to linear in front of them.
// - Network outputs are handed over linear (lowering.cpp).
// The rule gives a CNN one reformat at its input and one where it leaves the convolutions (before
// the classifier's reshape). It only proposes: as TensorRT times whole candidates, reformats
// included, the builder then times each channels-last region it made against the region linear
// and against its tail moved behind the reformat, and keeps the faster plan (format_regions.h).
#pragma once

#include <vector>

#include "kiln/layers.h"
#include "kiln/types.h"

namespace kiln {

// What the decision needs of one layer: its type, and per input the type it computes in, its
// dims, whether it is a constant and the format it has now (where it was made).
struct FormatQuery {
  LayerType type = LayerType::kCONSTANT;
  DeviceKind device = DeviceKind::kCPU;
  std::vector<DataType> inputTypes;
  std::vector<Dims> inputDims;
  std::vector<bool> inputConstant;
  std::vector<TensorFormat> inputFormats;
  std::vector<DataType> outputTypes;
  std::vector<Dims> outputDims;
};

struct FormatCandidate {
  std::vector<TensorFormat> inputs;
  std::vector<TensorFormat> outputs;
  const char* what = "linear";  // for the verbose log
};

// The candidates to try, most preferred first; the last one is all linear.
std::vector<FormatCandidate> formatCandidates(const FormatQuery& q);

}  // namespace kiln
