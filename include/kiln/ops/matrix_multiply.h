// Parameters of the built-in MatrixMultiply layer (src/ops/matrix_multiply/).
#pragma once

namespace kiln {

// Batched matrix product in numpy matmul rules: the last two dims multiply, leading dims broadcast.
struct MatrixMultiplyParams {
  bool transposeA = false;
  bool transposeB = false;

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("transposeA", p.transposeA);
    v("transposeB", p.transposeB);
  }
};

}  // namespace kiln
