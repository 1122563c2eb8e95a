// Parameters of the built-in RMSNormalization layer (ONNX RMSNormalization, opset 23: the
// normalisation of LLaMA-style transformers; src/ops/rms_normalization/).
#pragma once

#include <cstdint>

namespace kiln {

// Inputs X (rank >= 1, floating point) and Scale; output Y, of X's shape and type:
//   Y = X / sqrt(mean(X^2) + epsilon) * Scale
// with the mean of the squares taken over the dims from `axis` to the last, once per "row" (one
// index of the dims before `axis`); no mean is subtracted and there is no bias. A negative axis
// counts from the end. Scale follows LayerNormalization's rule: the shape X.shape[axis:] or any
// shape that broadcasts unidirectionally to it. The sum of squares is taken in FP32 whatever the
// storage type (in FP16 it overflows at activations of a few hundred).
//
// Why an op of its own rather than a mode of LayerNormalization: a mode would add a field to
// LayerNormalizationParams, which changes the bytes of every LayerNormalization step in a plan
// (the codec comes from the field list), so plan format 2 plans would no longer read; a new layer
// type is an addition that format 2 readers refuse cleanly as an unknown type. The two ops share
// the row geometry (how X is cut into rows, how Scale is indexed) through
// ops/layer_normalization/layer_normalization_semantics.h, so that rule still lives in one place.
struct RMSNormalizationParams {
  int32_t axis = -1;
  float epsilon = 1e-5f;  // finite and >= 0

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("axis", p.axis);
    v("epsilon", p.epsilon);
  }
};

}  // namespace kiln
