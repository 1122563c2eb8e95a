// The shape and type rule of Pooling (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"
#include "ops/window_shape.h"

namespace kiln::ops {

const InputCount Pooling::inputs = {1, 1, "x"};

Status Pooling::shapeRule(const PoolingParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "pooling";
  KILN_RETURN_IF_ERROR(shape::checkFloatInput(kLayer, in[0], 0));
  const Dims& x = in[0].dims;
  KILN_RETURN_IF_ERROR(shape::checkRank4(kLayer, "input 0 ([N,C,H,W])", x));
  const std::string where = std::string(kLayer) + ": ";
  if (x.d[2] < 1 || x.d[3] < 1)
    return invalidArgument(where + "input " + dimsString(x) + " has an empty spatial extent");
  TensorShape y;
  y.type = in[0].type;
  switch (p.type) {
    case PoolingType::kGLOBAL_MAX:
    case PoolingType::kGLOBAL_AVERAGE:
      y.dims = makeDims({x.d[0], x.d[1], 1, 1});
      out.assign(1, y);
      return Status::ok();
    case PoolingType::kMAX:
    case PoolingType::kAVERAGE:
      break;
    default:
      return invalidArgument(where + "unknown pooling type " +
                             std::to_string(static_cast<int32_t>(p.type)));
  }
  KILN_RETURN_IF_ERROR(
      shape::checkWindow(kLayer, "H", p.kernelH, p.strideH, p.padTop, p.padBottom, 1));
  KILN_RETURN_IF_ERROR(
      shape::checkWindow(kLayer, "W", p.kernelW, p.strideW, p.padLeft, p.padRight, 1));
  // A pad as large as the kernel would allow windows made only of padding (no max, no average).
  if (p.padTop >= p.kernelH || p.padBottom >= p.kernelH || p.padLeft >= p.kernelW ||
      p.padRight >= p.kernelW)
    return invalidArgument(
        where + "padding (top " + shape::str(p.padTop) + ", bottom " + shape::str(p.padBottom) +
        ", left " + shape::str(p.padLeft) + ", right " + shape::str(p.padRight) +
        ") must be smaller than the kernel " + shape::str(p.kernelH) + "x" + shape::str(p.kernelW));
  int64_t oh = 0, ow = 0;
  KILN_RETURN_IF_ERROR(shape::windowOutput(kLayer, "H", x.d[2], p.kernelH, p.strideH, p.padTop,
                                           p.padBottom, 1, p.ceilMode, &oh));
  KILN_RETURN_IF_ERROR(shape::windowOutput(kLayer, "W", x.d[3], p.kernelW, p.strideW, p.padLeft,
                                           p.padRight, 1, p.ceilMode, &ow));
  y.dims = makeDims({x.d[0], x.d[1], oh, ow});
  out.assign(1, y);
  return Status::ok();
}

bool Pooling::computeTypes(const PoolingParams&, std::vector<DataType>& types, std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
