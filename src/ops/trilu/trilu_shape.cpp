// The shape and type rule of Trilu (see ops/op.h): any element type, rank >= 2, output as input.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Trilu::inputs = {1, 1, "x"};

Status Trilu::shapeRule(const TriluParams&, const Shapes& in, Shapes& out) {
  if (in[0].dims.nbDims < 2)
    return invalidArgument(
        "trilu: input must have rank >= 2 (its last two dims are the matrix), "
        "got " +
        dimsString(in[0].dims));
  out.assign(1, in[0]);
  return Status::ok();
}

// Elements are moved, not computed with: any type.
bool Trilu::computeTypes(const TriluParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
