// The shape and type rule of Slice (see ops/op.h).
#include <limits>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount Slice::inputs = {1, 2, "x, dims source"};

Status Slice::shapeRule(const SliceParams& p, const Shapes& in, Shapes& out) {
  const char* layer = "slice";
  const Dims& d = in[0].dims;
  KILN_RETURN_IF_ERROR(shape::checkParamRank(layer, "starts", p.starts, d.nbDims));
  KILN_RETURN_IF_ERROR(shape::checkParamRank(layer, "steps", p.steps, d.nbDims));
  KILN_RETURN_IF_ERROR(shape::checkParamRank(layer, "outputDims", p.outputDims, d.nbDims));
  Dims outDims = p.outputDims;
  KILN_RETURN_IF_ERROR(shape::dimsFromSource(layer, "output dim", p.outputDimsOf, in, 1, outDims));
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const std::string where =
        "slice: axis " + std::to_string(i) + " of input " + dimsString(d) + ": ";
    const int64_t fromEnd = p.startFromEnd[i];
    if (fromEnd < 0)
      return invalidArgument(where + "startFromEnd " + std::to_string(fromEnd) +
                             " must not be negative");
    const int64_t start = p.startOn(i, d.d[i]), step = p.steps.d[i];
    if (step == 0) return invalidArgument(where + "step is 0");
    const int64_t trim = p.beforeEnd[i];
    if (trim != 0 && (trim < 0 || outDims.d[i] != -1 || step < 0))
      return invalidArgument(where + "beforeEnd " + std::to_string(trim) +
                             " needs output dim -1 (to the end) and a step > 0, and must not be "
                             "negative");
    if (outDims.d[i] == -1 && step > 0) {  // to the end (less `trim`): as many as fit after start
      if (start < 0)
        return invalidArgument(where + "output dim -1 (to the end) needs a start >= 0, not " +
                               std::to_string(start));
      const int64_t stop = trim >= d.d[i] ? 0 : d.d[i] - trim;
      outDims.d[i] = start >= stop ? 0 : (stop - start - 1) / step + 1;
    } else if (outDims.d[i] == -1) {  // step < 0: down to element 0
      if (d.d[i] > 0 && (start < 0 || start >= d.d[i]))
        return invalidArgument(where + "output dim -1 (down to element 0) needs a start in [0, " +
                               std::to_string(d.d[i]) + "), not " + std::to_string(start));
      const bool huge = step == std::numeric_limits<int64_t>::min();  // -step would overflow
      outDims.d[i] = d.d[i] == 0 ? 0 : huge ? 1 : start / -step + 1;
    }
    const int64_t n = outDims.d[i];
    if (n < 0)
      return invalidArgument(where + "output dim " + std::to_string(n) +
                             " is negative (only -1, to the end, is allowed)");
    if (n == 0) continue;  // nothing is read on this axis
    // The reads are start, start + step, ..., start + (n-1)*step: the first and the last are
    // the extremes. Division instead of multiplication keeps huge values from overflowing.
    bool inside = start >= 0 && start < d.d[i];
    if (inside && n > 1) {
      if (step > 0)
        inside = (n - 1) <= (d.d[i] - 1 - start) / step;
      else
        inside = step != std::numeric_limits<int64_t>::min() && (n - 1) <= start / -step;
    }
    if (!inside)
      return invalidArgument(where + "start " + std::to_string(start) + ", step " +
                             std::to_string(step) + " and output dim " + std::to_string(n) +
                             " read outside [0, " + std::to_string(d.d[i]) + ")");
  }
  out.assign(1, TensorShape{outDims, in[0].type});
  return Status::ok();
}

// Elements are moved, not computed with: any type. A dims source keeps its type (never read).
bool Slice::computeTypes(const SliceParams&, std::vector<DataType>& types, std::string&) {
  if (isFloatType(types[0])) types[0] = DataType::kFLOAT;
  return true;
}

}  // namespace kiln::ops
