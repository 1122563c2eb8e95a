// Resize (opset 10, 11+, 18's axes and keep_aspect_ratio_policy) and Upsample: nearest and linear,
// scales or sizes known at parse time.
#include <algorithm>
#include <cmath>
#include <cstring>

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

// Output dims from per-axis scales (floor(in * scale)) or from explicit sizes. `sizeScales`, when
// not empty, holds the scale each axis maps coordinates with where it is not sizes / in (opset
// 18's keep_aspect_ratio_policy: one scale for every resized axis).
Status finish(NodeContext& n, ResizeParams& p, const std::vector<float>& scales,
              const std::vector<int64_t>& sizes, const std::vector<float>& sizeScales = {}) {
  const Dims in = n.dims(0);
  p.outputDims = in;
  if (!sizes.empty()) {
    if (int32_t(sizes.size()) != in.nbDims)
      return n.error("sizes must have one value per input dim");
    for (int32_t k = 0; k < in.nbDims; ++k) {
      if (sizes[size_t(k)] <= 0) return n.error("sizes must be positive");
      p.outputDims.d[k] = sizes[size_t(k)];
      p.scales[k] = sizeScales.empty() ? float(double(sizes[size_t(k)]) / double(in.d[k]))
                                       : sizeScales[size_t(k)];
    }
  } else {
    if (int32_t(scales.size()) != in.nbDims)
      return n.error("scales must have one value per input dim");
    for (int32_t k = 0; k < in.nbDims; ++k) {
      if (!(scales[size_t(k)] > 0)) return n.error("scales must be positive");
      p.scales[k] = scales[size_t(k)];
      const int64_t out = int64_t(std::floor(double(in.d[k]) * double(scales[size_t(k)])));
      if (out < 1 && in.d[k] >= 1) return n.error("a scale gives an empty output");
      // -1: the layer's shape rule computes floor(in * scale) itself, so the dim follows a
      // dynamic input (with profiles the literal values below are then the same at every corner).
      p.outputDims.d[k] = -1;
    }
  }
  // kiln's resize has literal output dims and scales.
  std::vector<int64_t> literal(p.outputDims.d, p.outputDims.d + p.outputDims.nbDims);
  for (int32_t k = 0; k < in.nbDims; ++k) {
    uint32_t bits;
    std::memcpy(&bits, &p.scales[k], 4);
    literal.push_back(bits);
  }
  KILN_RETURN_IF_ERROR(
      n.literal("its output dims and scales (output dims, then the scales' bits)", literal));
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

// Opset 18's axes and keep_aspect_ratio_policy: scales or sizes for the listed axes only (the
// others keep their size, scale 1), and with sizes a policy other than "stretch" resizes every
// listed axis by one scale, the smallest (not_larger) or largest (not_smaller) of sizes / in,
// to floor(scale * in + 0.5), as ONNX's reference does.
Status resizeAxes(NodeContext& n, ResizeParams& p, std::vector<float> scales,
                  std::vector<int64_t> sizes) {
  const Dims in = n.dims(0);
  std::vector<int32_t> axes;
  if (n.attr("axes")) {
    std::vector<bool> seen(size_t(std::max(in.nbDims, 0)), false);
    for (int64_t a : n.attrInts("axes")) {
      int32_t ax;
      KILN_RETURN_IF_ERROR(n.axis(a, in.nbDims, ax));
      if (seen[size_t(ax)]) return n.error("axis " + std::to_string(ax) + " appears twice in axes");
      seen[size_t(ax)] = true;
      axes.push_back(ax);
    }
    const size_t given = sizes.empty() ? scales.size() : sizes.size();
    if (given != axes.size())
      return n.error(std::string(sizes.empty() ? "scales" : "sizes") + " has " +
                     std::to_string(given) + " values for " + std::to_string(axes.size()) +
                     " axes");
    std::vector<float> fullScales(size_t(in.nbDims), 1.f);
    std::vector<int64_t> fullSizes(in.d, in.d + in.nbDims);
    for (size_t k = 0; k < axes.size(); ++k) {
      if (sizes.empty())
        fullScales[size_t(axes[k])] = scales[k];
      else
        fullSizes[size_t(axes[k])] = sizes[k];
    }
    if (sizes.empty())
      scales = std::move(fullScales);
    else
      sizes = std::move(fullSizes);
  } else {
    for (int32_t k = 0; k < in.nbDims; ++k) axes.push_back(k);
  }
  const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return n.error("unknown keep_aspect_ratio_policy '" + policy + "'");
  if (policy == "stretch" || sizes.empty()) return finish(n, p, scales, sizes);
  if (int32_t(sizes.size()) != in.nbDims) return n.error("sizes must have one value per input dim");
  double scale = policy == "not_larger" ? INFINITY : 0.0;
  for (int32_t ax : axes) {
    if (in.d[ax] == 0) return n.error("keep_aspect_ratio_policy needs non-empty resized axes");
    const double r = double(sizes[size_t(ax)]) / double(in.d[ax]);
    scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
  }
  std::vector<float> sizeScales(size_t(in.nbDims), 1.f);
  for (int32_t ax : axes) {
    sizes[size_t(ax)] = int64_t(std::floor(scale * double(in.d[ax]) + 0.5));
    sizeScales[size_t(ax)] = float(scale);
  }
  return finish(n, p, scales, sizes, sizeScales);
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
    return n.unsupportedError(
        "antialias is not supported (kiln's resize does not widen its filter when downscaling)");
  return resizeAxes(n, p, scales, sizes);
}

}  // namespace

void addResizeImporters(ImporterTable& t) {
  t.push_back({"Resize", importResize, {1, 2, 3}});
  t.push_back({"Upsample", importUpsample, {1}});
}

}  // namespace kiln::onnx_import
