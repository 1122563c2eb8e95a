// Range's values, for its CPU and CUDA kernels alike: element i is start + i * delta, computed in
// double and converted once to the output type (the shape rule keeps every value within +-2^53,
// where double holds integers exactly).
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::range {

// Integers beyond this magnitude would not survive the double arithmetic exactly.
constexpr double kExactLimit = 9007199254740992.0;  // 2^53

KILN_HOST_DEVICE inline double value(double start, double delta, int64_t i) {
  return start + static_cast<double>(i) * delta;
}

}  // namespace kiln::ops::range
