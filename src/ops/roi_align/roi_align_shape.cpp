// The shape and type rule of RoiAlign (see ops/op.h).
#include <cmath>
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount RoiAlign::inputs = {3, 3, "X, rois, batch_indices"};

Status RoiAlign::shapeRule(const RoiAlignParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "roi_align";
  KILN_RETURN_IF_ERROR(shape::checkFloatInput(kLayer, in[0], 0));
  KILN_RETURN_IF_ERROR(shape::checkFloatInput(kLayer, in[1], 1));
  if (in[2].type != DataType::kINT32 && in[2].type != DataType::kINT64)
    return invalidArgument(std::string("roi_align: input 2 (batch_indices) is ") +
                           dataTypeName(in[2].type) + "; must be int32 or int64");
  const Dims& x = in[0].dims;
  const Dims& rois = in[1].dims;
  const Dims& idx = in[2].dims;
  if (x.nbDims != 4)
    return invalidArgument("roi_align: input 0 (X) must be [N,C,H,W], got " + dimsString(x));
  if (rois.nbDims != 2 || rois.d[1] != 4)
    return invalidArgument("roi_align: input 1 (rois) must be [R,4], got " + dimsString(rois));
  if (idx.nbDims != 1 || idx.d[0] != rois.d[0])
    return invalidArgument("roi_align: input 2 (batch_indices) is " + dimsString(idx) +
                           ", expected [" + shape::str(rois.d[0]) + "] (one per roi)");
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "invalid mode", p.mode));
  if (p.outputHeight < 1 || p.outputWidth < 1)
    return invalidArgument("roi_align: output size " + shape::str(p.outputHeight) + "x" +
                           shape::str(p.outputWidth) + " must be at least 1x1");
  if (p.samplingRatio < 0)
    return invalidArgument("roi_align: sampling ratio " + shape::str(p.samplingRatio) +
                           " must be >= 0 (0: adaptive)");
  if (!std::isfinite(p.spatialScale))
    return invalidArgument("roi_align: spatial scale must be finite");
  const Dims y = makeDims({rois.d[0], x.d[1], p.outputHeight, p.outputWidth});
  return shape::setOutput(kLayer, y, in[0].type, out);
}

// X and rois in fp32; batch_indices (input 2) are read as int32 or int64 indices, never converted.
bool RoiAlign::computeTypes(const RoiAlignParams&, std::vector<DataType>& types, std::string& why) {
  const DataType indices = types[2];
  if (indices != DataType::kINT32 && indices != DataType::kINT64) {
    why = std::string("roi_align: batch_indices must be int32 or int64, got ") +
          dataTypeName(indices);
    return false;
  }
  types.pop_back();
  const bool ok = shape::floatsInFp32(name, types, why);
  types.push_back(indices);
  return ok;
}

}  // namespace kiln::ops
