// Resize (opset 10, 11+) and Upsample: nearest and linear, scales or sizes known at parse time.
#include <cmath>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

Status modeOf(NodeContext& n, ResizeParams& p) {
  const std::string mode = n.attrString("mode", "nearest");
  if (!lookupName(mode,
                  {{"nearest", ResizeMode::kNEAREST},
                   {"linear", ResizeMode::kLINEAR},
                   {"bilinear", ResizeMode::kLINEAR}},
                  p.mode))
    return n.unsupportedError("mode '" + mode + "' is not supported (nearest and linear are)");
  return Status::ok();
}

// Output dims from per-axis scales (floor(in * scale)) or from explicit sizes.
Status finish(NodeContext& n, ResizeParams& p, const std::vector<float>& scales,
              const std::vector<int64_t>& sizes) {
  const Dims in = n.dims(0);
  p.outputDims = in;
  if (!sizes.empty()) {
    if (int32_t(sizes.size()) != in.nbDims)
      return n.error("sizes must have one value per input dim");
    for (int32_t k = 0; k < in.nbDims; ++k) {
      if (sizes[size_t(k)] <= 0) return n.error("sizes must be positive");
      p.outputDims.d[k] = sizes[size_t(k)];
      p.scales[k] = float(double(sizes[size_t(k)]) / double(in.d[k]));
    }
  } else {
    if (int32_t(scales.size()) != in.nbDims)
      return n.error("scales must have one value per input dim");
    for (int32_t k = 0; k < in.nbDims; ++k) {
      if (!(scales[size_t(k)] > 0)) return n.error("scales must be positive");
      p.scales[k] = scales[size_t(k)];
      p.outputDims.d[k] = int64_t(std::floor(double(in.d[k]) * double(scales[size_t(k)])));
      if (p.outputDims.d[k] < 1) return n.error("a scale gives an empty output");
    }
  }
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  return n.setLayerOutputs(n.net().addResize(*t, p));
}

// Opsets before 11 map coordinates asymmetrically and take nearest pixels by truncation when
// enlarging (as onnxruntime does).
void legacyCoordinates(ResizeParams& p, const std::vector<float>& scales) {
  p.coordinates = ResizeCoordinates::kASYMMETRIC;
  bool down = false;
  for (float s : scales) down |= s < 1.f;
  p.rounding = down ? ResizeRounding::kCEIL : ResizeRounding::kFLOOR;
}

Status floatsOf(NodeContext& n, int32_t i, std::vector<float>& out) {
  const ConstTensor* c = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(i, c));
  out.clear();
  for (int64_t k = 0; k < c->count(); ++k) out.push_back(float(c->at(k)));
  return Status::ok();
}

Status importUpsample(NodeContext& n) {
  ResizeParams p;
  KILN_RETURN_IF_ERROR(modeOf(n, p));
  std::vector<float> scales;
  if (n.opset() < 7) return n.unsupportedError("Upsample before opset 7 is not supported");
  if (n.opset() < 9) {
    KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
    scales = n.attrFloats("scales");
  } else {
    KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
    KILN_RETURN_IF_ERROR(floatsOf(n, 1, scales));
  }
  legacyCoordinates(p, scales);
  return finish(n, p, scales, {});
}

Status importResize(NodeContext& n) {
  ResizeParams p;
  KILN_RETURN_IF_ERROR(modeOf(n, p));
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (n.opset() < 11) {
    KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
    KILN_RETURN_IF_ERROR(floatsOf(n, 1, scales));
    legacyCoordinates(p, scales);
    return finish(n, p, scales, {});
  }
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 4));
  if (n.hasInput(2)) KILN_RETURN_IF_ERROR(floatsOf(n, 2, scales));
  if (n.hasInput(3)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(3, c));
    sizes = toInts(*c);
  }
  if (!sizes.empty() && !scales.empty())
    return n.error("only one of scales and sizes may be given");
  if (sizes.empty() && scales.empty()) return n.error("one of scales and sizes must be given");
  const std::string ct = n.attrString("coordinate_transformation_mode", "half_pixel");
  if (!lookupName(ct,
                  {{"half_pixel", ResizeCoordinates::kHALF_PIXEL},
                   {"asymmetric", ResizeCoordinates::kASYMMETRIC},
                   {"align_corners", ResizeCoordinates::kALIGN_CORNERS},
                   {"pytorch_half_pixel", ResizeCoordinates::kPYTORCH_HALF_PIXEL},
                   {"tf_half_pixel_for_nn", ResizeCoordinates::kTF_HALF_PIXEL_FOR_NN}},
                  p.coordinates))
    return n.unsupportedError("coordinate_transformation_mode '" + ct + "' is not supported");
  const std::string nm = n.attrString("nearest_mode", "round_prefer_floor");
  if (!lookupName(nm,
                  {{"round_prefer_floor", ResizeRounding::kROUND_PREFER_FLOOR},
                   {"round_prefer_ceil", ResizeRounding::kROUND_PREFER_CEIL},
                   {"floor", ResizeRounding::kFLOOR},
                   {"ceil", ResizeRounding::kCEIL}},
                  p.rounding))
    return n.error("unknown nearest_mode '" + nm + "'");
  if (n.attrInt("exclude_outside", 0) != 0)
    return n.unsupportedError("exclude_outside is not supported");
  if (n.attr("antialias") && n.attrInt("antialias", 0) != 0)
    return n.unsupportedError("antialias is not supported");
  if (n.attr("axes")) return n.unsupportedError("the axes attribute is not supported");
  return finish(n, p, scales, sizes);
}

}  // namespace

void addResizeImporters(ImporterTable& t) {
  t.push_back({"Resize", importResize, {1, 2, 3}});
  t.push_back({"Upsample", importUpsample, {1}});
}

}  // namespace kiln::onnx_import
