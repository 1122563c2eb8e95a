// Kernels that copy elements without looking at them (the data movers: shuffle, concatenation,
// slice, padding, tile, expand, gather, select) are written per element size, as unsigned
// integers of 1, 2, 4 or 8 bytes, so one kernel serves every data type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln::cuda {

// Calls f(U{}) with U the unsigned integer of `size` bytes and returns what it returns.
template <class F>
Status bySize(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      return internalError("data movement: element size " + std::to_string(size));
  }
}

}  // namespace kiln::cuda
