// The shape and type rule of Range (see ops/op.h): no data is read; the length is a literal or a
// dim of the dims source.
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/range/range_semantics.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Range::inputs = {0, 1, "dims source"};

Status Range::shapeRule(const RangeParams& p, const Shapes& in, Shapes& out) {
  if (p.type != DataType::kFLOAT && p.type != DataType::kINT32 && p.type != DataType::kINT64)
    return invalidArgument(std::string("range: type ") + dataTypeName(p.type) +
                           " is not one of float, int32 and int64");
  if (!std::isfinite(p.start) || !std::isfinite(p.delta))
    return invalidArgument("range: start and delta must be finite");
  int64_t length = p.length;
  if (p.lengthOf != 0) {
    if (in.empty())
      return invalidArgument("range: the length is dim " + std::to_string(p.lengthOf - 1) +
                             " of the dims source, and there is none");
    if (p.lengthOf < 0 || p.lengthOf > in[0].dims.nbDims)
      return invalidArgument("range: the length is dim " + std::to_string(p.lengthOf - 1) +
                             " of the dims source " + dimsString(in[0].dims) +
                             ", which has no such dim");
    length = in[0].dims.d[p.lengthOf - 1];
  } else if (!in.empty()) {
    return invalidArgument("range: a dims source is given but the length does not come from it");
  }
  if (length < 0) return invalidArgument("range: length " + std::to_string(length) + " < 0");
  // Every value, the last one being the extreme, must be exact in double and fit the type.
  const double last = length > 0 ? range::value(p.start, p.delta, length - 1) : p.start;
  double limit = range::kExactLimit;
  if (p.type == DataType::kINT32) limit = 2147483647.0;
  if (p.type == DataType::kFLOAT) limit = 3.4e38;
  if (std::fabs(p.start) > limit || std::fabs(last) > limit)
    return invalidArgument("range: values from " + std::to_string(p.start) + " to " +
                           std::to_string(last) + " do not fit " + dataTypeName(p.type) +
                           (p.type == DataType::kINT64 ? " exactly (|value| <= 2^53)" : ""));
  if (p.type != DataType::kFLOAT &&
      (p.start != std::trunc(p.start) || p.delta != std::trunc(p.delta)))
    return invalidArgument("range: an integer range needs integer start and delta");
  Dims d;
  d.nbDims = 1;
  d.d[0] = length;
  out.assign(1, TensorShape{d, p.type});
  return Status::ok();
}

// The dims source's data is never read: its type stays what it is.
bool Range::computeTypes(const RangeParams&, std::vector<DataType>&, std::string&) { return true; }

}  // namespace kiln::ops
