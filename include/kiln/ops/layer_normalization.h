// Parameters of the built-in LayerNormalization layer (ONNX LayerNormalization, opset 17: the
// normalisation of transformers; src/ops/layer_normalization/).
#pragma once

#include <cstdint>

namespace kiln {

// Inputs X (rank >= 1, floating point), Scale and an optional B (2 or 3 inputs); output Y, of X's
// shape and type:
//   Y = (X - mean) / sqrt(var + epsilon) * Scale + B
// where mean and the biased variance var (the mean of the squared deviations, no Bessel
// correction) are taken over the dims from `axis` to the last, once per "row" (one index of the
// dims before `axis`). A negative axis counts from the end (-1: the last dim alone). Scale and B
// have the shape X.shape[axis:] (ONNX's rule); kiln also takes any shape that broadcasts
// unidirectionally to it (trailing dims aligned, each 1 or equal; extra leading dims must be 1),
// so a [1, C] scale with axis = -1 works.
//
// The statistics are computed in FP32 whatever the storage type, and fp16/bf16 values are
// converted to FP32 before any arithmetic: in FP16 the sum of squares of a row overflows (65504)
// as soon as the activations reach a few hundred, which transformers' do, and users get NaNs.
//
// ONNX's optional outputs Mean and InvStdDev are not this layer's: the ONNX importer builds them
// from reduce and elementwise layers when a model uses them.
struct LayerNormalizationParams {
  int32_t axis = -1;
  float epsilon = 1e-5f;  // finite and >= 0

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("axis", p.axis);
    v("epsilon", p.epsilon);
  }
};

}  // namespace kiln
