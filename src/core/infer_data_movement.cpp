// Shape and type inference for the layers that only move elements: gather, slice, padding, tile
// and expand. They serve every element type; the output keeps the data input's type.
#include <algorithm>
#include <limits>
#include <string>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {
namespace {

// Largest single dim any output may have, so that dim arithmetic below cannot overflow int64.
constexpr int64_t kMaxDim = int64_t{1} << 60;

Status checkParamRank(const char* layer, const char* what, const Dims& d, int32_t rank) {
  if (d.nbDims != rank)
    return invalidArgument(std::string(layer) + ": " + what + " " + light::dimsString(d) +
                           " have rank " + std::to_string(d.nbDims) + " but the input has rank " +
                           std::to_string(rank));
  return Status::ok();
}

}  // namespace

Status inferGather(const GatherParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out) {
  const char* layer = "gather";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 2));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const Dims& data = in[0].dims;
  const Dims& idx = in[1].dims;
  if (in[1].type != DataType::kINT32 && in[1].type != DataType::kINT64)
    return invalidArgument(std::string("gather: indices must be int32 or int64, got ") +
                           dataTypeName(in[1].type));
  if (data.nbDims < 1) return invalidArgument("gather: data must have rank >= 1");
  int32_t axis = 0;
  KILN_RETURN_IF_ERROR(light::normalizeAxis(layer, p.axis, data.nbDims, &axis));
  if (data.nbDims - 1 + idx.nbDims > Dims::kMaxDims)
    return invalidArgument("gather: data " + light::dimsString(data) + " and indices " +
                           light::dimsString(idx) + " give an output of rank " +
                           std::to_string(data.nbDims - 1 + idx.nbDims) + ", above 8");
  if (data.d[axis] == 0 && volume(idx) > 0)
    return invalidArgument("gather: data " + light::dimsString(data) + " is empty on axis " +
                           std::to_string(axis) + ", so no index can be valid");
  Dims o;
  for (int32_t i = 0; i < axis; ++i) o.d[o.nbDims++] = data.d[i];
  for (int32_t i = 0; i < idx.nbDims; ++i) o.d[o.nbDims++] = idx.d[i];
  for (int32_t i = axis + 1; i < data.nbDims; ++i) o.d[o.nbDims++] = data.d[i];
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

Status inferSlice(const SliceParams& p, const std::vector<TensorShape>& in,
                  std::vector<TensorShape>& out) {
  const char* layer = "slice";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const Dims& d = in[0].dims;
  KILN_RETURN_IF_ERROR(checkParamRank(layer, "starts", p.starts, d.nbDims));
  KILN_RETURN_IF_ERROR(checkParamRank(layer, "steps", p.steps, d.nbDims));
  KILN_RETURN_IF_ERROR(checkParamRank(layer, "outputDims", p.outputDims, d.nbDims));
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const std::string where =
        "slice: axis " + std::to_string(i) + " of input " + light::dimsString(d) + ": ";
    const int64_t start = p.starts.d[i], step = p.steps.d[i], n = p.outputDims.d[i];
    if (step == 0) return invalidArgument(where + "step is 0");
    if (n < 0) return invalidArgument(where + "output dim " + std::to_string(n) + " is negative");
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
  out.assign(1, TensorShape{p.outputDims, in[0].type});
  return Status::ok();
}

Status inferPadding(const PaddingParams& p, const std::vector<TensorShape>& in,
                    std::vector<TensorShape>& out) {
  const char* layer = "padding";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const int32_t mode = static_cast<int32_t>(p.mode);
  if (mode < static_cast<int32_t>(PaddingMode::kCONSTANT) ||
      mode > static_cast<int32_t>(PaddingMode::kEDGE))
    return invalidArgument("padding: unknown mode " + std::to_string(mode));
  const Dims& d = in[0].dims;
  Dims o = d;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const std::string where =
        "padding: axis " + std::to_string(i) + " of input " + light::dimsString(d) + ": ";
    const int64_t b = p.before[i], a = p.after[i];
    if (b < 0 || a < 0 || b > kMaxDim || a > kMaxDim)
      return invalidArgument(where + "pads " + std::to_string(b) + " before and " +
                             std::to_string(a) + " after must be in [0, 2^60]");
    if (p.mode == PaddingMode::kREFLECT && (b >= d.d[i] || a >= d.d[i]) && (a > 0 || b > 0))
      return invalidArgument(where + "reflect pads " + std::to_string(b) + " before and " +
                             std::to_string(a) + " after must each be below the dim " +
                             std::to_string(d.d[i]));
    if (p.mode == PaddingMode::kEDGE && d.d[i] == 0 && (a > 0 || b > 0))
      return invalidArgument(where + "edge padding of an empty axis has no edge to repeat");
    o.d[i] = d.d[i] + b + a;  // each term is at most 2^60
    if (o.d[i] > kMaxDim) return invalidArgument(where + "padded dim is too large");
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

Status inferTile(const TileParams& p, const std::vector<TensorShape>& in,
                 std::vector<TensorShape>& out) {
  const char* layer = "tile";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const Dims& d = in[0].dims;
  KILN_RETURN_IF_ERROR(checkParamRank(layer, "repeats", p.repeats, d.nbDims));
  Dims o = d;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    const int64_t r = p.repeats.d[i];
    // ONNX requires repeats >= 0; 0 gives an empty axis.
    if (r < 0)
      return invalidArgument("tile: repeats " + light::dimsString(p.repeats) + " has negative " +
                             std::to_string(r) + " on axis " + std::to_string(i));
    if (d.d[i] != 0 && r > kMaxDim / d.d[i])
      return invalidArgument("tile: repeats " + light::dimsString(p.repeats) + " of input " +
                             light::dimsString(d) + " give a dim that is too large");
    o.d[i] = d.d[i] * r;
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

Status inferExpand(const ExpandParams& p, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out) {
  const char* layer = "expand";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 1));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  const Dims& d = in[0].dims;
  const Dims& s = p.shape;
  if (s.nbDims < 0 || s.nbDims > Dims::kMaxDims)
    return invalidArgument("expand: shape rank " + std::to_string(s.nbDims) + " is outside [0, 8]");
  Dims o;
  o.nbDims = std::max(d.nbDims, s.nbDims);
  for (int32_t i = 0; i < o.nbDims; ++i) {
    // Trailing dims align; a missing dim acts as 1.
    const int32_t di = i - (o.nbDims - d.nbDims), si = i - (o.nbDims - s.nbDims);
    const int64_t a = di >= 0 ? d.d[di] : 1, b = si >= 0 ? s.d[si] : 1;
    if (b < 0)
      return invalidArgument("expand: shape " + light::dimsString(s) + " has a negative dim");
    if (a != b && a != 1 && b != 1)
      return invalidArgument("expand: input " + light::dimsString(d) + " does not broadcast with " +
                             "shape " + light::dimsString(s) + " (output dim " + std::to_string(i) +
                             ": " + std::to_string(a) + " vs " + std::to_string(b) + ")");
    o.d[i] = a == 1 ? b : a;
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  out.assign(1, TensorShape{o, in[0].type});
  return Status::ok();
}

}  // namespace kiln
