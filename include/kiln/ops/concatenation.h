// Parameters of the built-in Concatenation layer (src/ops/concatenation/).
#pragma once

#include <cstdint>

namespace kiln {

struct ConcatenationParams {
  int32_t axis = 0;  // negative counts from the end

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("axis", p.axis);
  }
};

}  // namespace kiln
