// Parameters of the built-in Softmax layer (and LogSoftmax; src/ops/softmax/).
#pragma once

#include <cstdint>

namespace kiln {

struct SoftmaxParams {
  int32_t axis = -1;  // negative counts from the end
  bool log = false;   // LogSoftmax

  template <class Self, class Visit>
  static void fields(Self& p, Visit&& v) {
    v("axis", p.axis);
    v("log", p.log);
  }
};

}  // namespace kiln
