// The shape and type rule of Shape (see ops/op.h): one input of any type (never read), an int64
// output of as many elements as dims it gives.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape/shape_semantics.h"

namespace kiln::ops {

const InputCount Shape::inputs = {1, 1, "x"};

Status Shape::shapeRule(const ShapeParams& p, const Shapes& in, Shapes& out) {
  if (p.start < 0 || p.end < 0)
    return invalidArgument("shape: start " + std::to_string(p.start) + " and end " +
                           std::to_string(p.end) + " must not be negative (the importer resolves " +
                           "ONNX's negative ones against the rank)");
  const int32_t rank = in[0].dims.nbDims;
  Dims d;
  d.nbDims = 1;
  d.d[0] = shape_of::last(p, rank) - shape_of::first(p, rank);
  out.assign(1, TensorShape{d, DataType::kINT64});
  return Status::ok();
}

// The input's data is never read: its type stays what it is.
bool Shape::computeTypes(const ShapeParams&, std::vector<DataType>&, std::string&) { return true; }

}  // namespace kiln::ops
