// Parameters of the built-in Select layer (ONNX Where; src/ops/select/).
#pragma once

namespace kiln {

// Inputs condition (kBOOL), x, y, all broadcast together; output has x's type.
struct SelectParams {
  template <class Self, class Visit>
  static void fields(Self&, Visit&&) {}
};

}  // namespace kiln
