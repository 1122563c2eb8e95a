#include "core/plan.h"

#include <limits>

namespace kiln::plan {

int64_t tensorBytes(const Dims& dims, DataType type) {
  const int64_t elementSize = static_cast<int64_t>(dataTypeSize(type));
  if (elementSize == 0) return -1;
  const int64_t count = volume(dims);  // -1 for a bad rank, a negative dim or an overflow
  if (count < 0 || count > std::numeric_limits<int64_t>::max() / elementSize) return -1;
  return count * elementSize;
}

const ShapeValueInput* findShapeValueInput(const Plan& plan, int32_t t) {
  for (const ShapeValueInput& in : plan.shapeValueInputs)
    if (in.tensor == t) return &in;
  return nullptr;
}

}  // namespace kiln::plan
