// Parameters of the built-in GroupNormalization layer (ONNX GroupNormalization, opsets 18 and 21;
// src/ops/group_normalization/).
#pragma once

#include <cstdint>

namespace kiln {

// Inputs X [N, C, D1, ...] (rank >= 2, floating point), Scale [C] and B [C]; output Y, of X's
// shape and type. The C channels are split into numGroups groups of C / numGroups consecutive
// channels; each (n, group) is normalised over its channels and all their spatial elements, then
// scaled and shifted per channel:
//   Y[n, c, ...] = (X[n, c, ...] - mean[n, g]) / sqrt(var[n, g] + epsilon) * Scale[c] + B[c]
// with g = c / (C / numGroups) and var the biased variance. C must be a multiple of numGroups.
// This is ONNX's opset 21 form; the ONNX importer turns opset 18's per-group Scale and B ([G])
// into per-channel ones.
//
// The statistics are FP32 whatever the storage type, as LayerNormalization's (same two passes,
// the rules of ops/layer_normalization/layer_normalization_semantics.h).
//
// Why an op of its own rather than a lowering at import (reshape to [N, G, C/G * S],
// LayerNormalization, reshape back, per-channel Mul and Add): the lowering reads and writes the
// whole tensor three times more (the affine after the normalisation cannot fold into the
// LayerNormalization, whose Scale is per row position and here varies per group), and diffusion
// models' GroupNorms sit on the largest activations they have; this layer is one pass of reads for
// each statistic and one of writes.
struct GroupNormalizationParams {
  int32_t numGroups = 1;  // >= 1, divides C
  float epsilon = 1e-5f;  // finite and >= 0

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("numGroups", p.numGroups);
    v("epsilon", p.epsilon);
  }
};

}  // namespace kiln
