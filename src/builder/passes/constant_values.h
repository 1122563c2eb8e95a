// Reading the values of a constant tensor, whatever its element type, for passes that decide by
// value (x + 0, x * 1, per-channel scales).
#pragma once

#include <cstdint>
#include <vector>

#include "builder/graph.h"

namespace kiln::passes {

// Element k of constant `t` as a double (floats widened, integers converted, bool 0/1).
double constantValue(const GraphTensor& t, int64_t k);

// Whether every element of constant `t` equals `value` (false for an empty tensor or one whose
// bytes do not match its shape).
bool constantIsAll(const GraphTensor& t, double value);

// The FP32 values of constant `t` widened to double, or false if it is not an FP32 constant of
// its shape's size.
bool floatValues(const GraphTensor& t, std::vector<double>& out);

}  // namespace kiln::passes
