// Parameters of the built-in Normalization layer (ONNX InstanceNormalization;
// src/ops/normalization/).
#pragma once

namespace kiln {

// Inputs x [N, C, ...], scale [C], bias [C]; each (n, c) slice is normalised over its spatial
// elements.
struct NormalizationParams {
  float epsilon = 1e-5f;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("epsilon", p.epsilon);
  }
};

}  // namespace kiln
