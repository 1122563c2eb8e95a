// RoiAlign (opsets 10 and 16).
#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

Status importRoiAlign(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  RoiAlignParams p;
  const std::string mode = n.attrString("mode", "avg");
  if (!lookupName(mode, {{"avg", RoiAlignMode::kAVERAGE}, {"max", RoiAlignMode::kMAX}}, p.mode))
    return n.error("unknown mode '" + mode + "'");
  p.outputHeight = int32_t(n.attrInt("output_height", 1));
  p.outputWidth = int32_t(n.attrInt("output_width", 1));
  p.samplingRatio = int32_t(n.attrInt("sampling_ratio", 0));
  p.spatialScale = n.attrFloat("spatial_scale", 1.f);
  // Opset 10 had only what opset 16 calls output_half_pixel.
  const std::string ct = n.attrString("coordinate_transformation_mode",
                                      n.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (!lookupName(ct, {{"half_pixel", true}, {"output_half_pixel", false}}, p.halfPixel))
    return n.error("unknown coordinate_transformation_mode '" + ct + "'");
  if (p.outputHeight < 1 || p.outputWidth < 1 || p.samplingRatio < 0)
    return n.error("output_height/width must be positive and sampling_ratio not negative");
  ITensor *x, *rois, *idx;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  KILN_RETURN_IF_ERROR(n.tensor(1, rois));
  KILN_RETURN_IF_ERROR(n.tensor(2, idx));
  return n.setLayerOutputs(n.net().addRoiAlign(*x, *rois, *idx, p));
}

}  // namespace

void addMiscImporters(ImporterTable& t) { t.push_back({"RoiAlign", importRoiAlign}); }

}  // namespace kiln::onnx_import
