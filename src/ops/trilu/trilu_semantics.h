// Which elements Trilu keeps, for its CPU and CUDA kernels alike.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace kiln::ops::trilu {

// Element (row, col) of a matrix survives when it lies on the kept side of diagonal k: on or
// above it for the upper triangle (col - row >= k), on or below for the lower (col - row <= k).
KILN_HOST_DEVICE inline bool keeps(bool upper, int64_t k, int64_t row, int64_t col) {
  return upper ? col - row >= k : col - row <= k;
}

}  // namespace kiln::ops::trilu
