// Fresh random tensor contents for timing (builder) and for `kiln run` without inputs.
#pragma once

#include <cstdint>
#include <random>

#include "kiln/types.h"

namespace kiln {

// Fills `count` elements of `type` at `data`: floats uniform in [-1, 1), integers in [0, 4),
// bools 0/1. Never all zeros for count > 0 in practice.
void fillRandom(void* data, DataType type, int64_t count, std::mt19937& rng);

}  // namespace kiln
