// Index arithmetic that exports run on constants: Range, ScatterND and GatherElements. Vision
// transformers use
// them to build masks and index tables from static shapes (torchvision's Swin: its shifted-window
// attention mask and relative position index; transformers' BERT gathers its token-type buffer by
// position ids), so with static shapes every input is known while
// parsing and the result folds to a constant. With profiles, a Range whose limit follows the
// input shapes and is read as data (position ids) becomes the Range layer, its length a dynamic
// input's dim. A ScatterND whose inputs are not all constants becomes the
// built-in ScatterND layer (kiln/ops/scatter_nd.h), which applies the same rules at run time.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

// The node's three inputs, which must all be constants.
Status threeConstants(NodeContext& n, const ConstTensor* (&c)[3]) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  for (int32_t i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(n.constant(i, c[i]));
  return Status::ok();
}

// A scalar's value as the bits literal() compares between corners.
int64_t rangeBits(const ConstTensor& c) {
  if (!c.isFloat()) return c.i[0];
  uint32_t bits;
  std::memcpy(&bits, &c.f[0], 4);
  return bits;
}

// The Range layer (kiln/ops/range.h) whose length is the dim `source` names.
Status addRangeLayer(NodeContext& n, const ConstTensor& start, const ConstTensor& delta,
                     const DimsSource& source) {
  RangeParams p;
  // The types constants become in the network (constant_tensor.cpp): small integers as int32.
  p.type = start.isFloat()                  ? DataType::kFLOAT
           : start.type == DataType::kINT64 ? DataType::kINT64
                                            : DataType::kINT32;
  p.start = start.at(0);
  p.delta = delta.at(0);
  p.lengthOf = source.dimsOf[0];
  ITensor* from = nullptr;
  KILN_RETURN_IF_ERROR(n.sourceTensor(source, from));
  for (int32_t i = 0; i < 3; ++i) n.markGeneric(i);  // the limit: now the length's source
  return n.setLayerOutputs(n.net().addLayer(p, {from}));
}

// Range(start, limit, delta), three scalars of one type: max(ceil((limit - start) / delta), 0)
// elements start, start + delta, ... Integers are exact; floats accumulate in the type, as
// onnxruntime does.
Status importRange(NodeContext& n) {
  const ConstTensor* in[3] = {};
  KILN_RETURN_IF_ERROR(threeConstants(n, in));
  const ConstTensor *start = in[0], *limit = in[1], *delta = in[2];
  if (start->count() != 1 || limit->count() != 1 || delta->count() != 1)
    return n.error("start, limit and delta must be scalars");
  if (start->type != limit->type || start->type != delta->type)
    return n.error(std::string("start, limit and delta must have one type, got ") +
                   dataTypeName(start->type) + ", " + dataTypeName(limit->type) + " and " +
                   dataTypeName(delta->type));
  if (delta->at(0) == 0) return n.error("delta must not be 0");
  int64_t count = 0;
  if (start->isFloat()) {
    const float s = start->f[0], l = limit->f[0], d = delta->f[0];
    const double c = std::ceil(double(l - s) / double(d));
    if (!(c < double(int64_t{1} << 40))) return n.unsupportedError("the range is too long");
    count = std::max<int64_t>(int64_t(c), 0);
  } else {
    // In 128 bits, so that limit - start cannot overflow.
    const __int128 s = start->i[0], diff = __int128(limit->i[0]) - s, d = delta->i[0];
    __int128 c = diff / d;
    if (diff % d != 0 && ((diff > 0) == (d > 0))) ++c;
    if (c > (__int128(1) << 40)) return n.unsupportedError("the range is too long");
    count = c < 0 ? 0 : int64_t(c);
  }
  const Dims dims = makeDims({count});
  if (n.makesLayers()) {
    // With profiles, a limit that follows the input shapes (torch.arange(sequence)): the start
    // and delta must not, and the length is an input's dim at run time. At a corner the range
    // folds (and becomes a constant tensor, where the final network has this layer).
    DimsSource source;
    KILN_RETURN_IF_ERROR(n.literal("start and delta", {rangeBits(*start), rangeBits(*delta)}));
    KILN_RETURN_IF_ERROR(n.dimsFromInputs("its length", dims, source));
    if (!source.input.empty()) return addRangeLayer(n, *start, *delta, source);
  }
  if (!foldable(dims)) return n.unsupportedError("the folded range is too large");
  ConstTensor out = ConstTensor::make(start->type, dims);
  if (out.isFloat()) {
    float v = start->f[0];
    for (int64_t k = 0; k < count; ++k, v += delta->f[0]) out.f[size_t(k)] = v;
  } else {
    for (int64_t k = 0; k < count; ++k) out.i[size_t(k)] = start->i[0] + k * delta->i[0];
  }
  return n.setOutput(0, std::move(out));
}

// The reductions ScatterND combines an update with (opset 16: add, mul; 18: max, min).
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };
static_assert(int(Reduction::kAdd) == int(ScatterReduction::kADD) &&
              int(Reduction::kMin) == int(ScatterReduction::kMIN));

template <class T>
T combine(Reduction r, T old, T update) {
  switch (r) {
    case Reduction::kNone:
      return update;
    case Reduction::kAdd:
      return old + update;
    case Reduction::kMul:
      return old * update;
    case Reduction::kMax:
      return std::max(old, update);
    case Reduction::kMin:
      return std::min(old, update);
  }
  return update;
}

// ScatterND(data, indices, updates): a copy of data in which each index tuple (the last axis of
// indices, k <= rank(data) values) addresses a slice data[idx] of shape data.shape[k:], set to
// (or combined with) the matching slice of updates, in order.
Status importScatterNd(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(3, 3));
  const std::string reduction = n.attrString("reduction", "none");
  const char* const kNames[] = {"none", "add", "mul", "max", "min"};  // in Reduction's order
  const auto* named = std::find(std::begin(kNames), std::end(kNames), reduction);
  if (named == std::end(kNames)) return n.error("unknown reduction '" + reduction + "'");
  const auto r = static_cast<Reduction>(named - std::begin(kNames));
  if (!n.isConstant(0) || !n.isConstant(1) || !n.isConstant(2)) {
    // The layer's enum has Reduction's order (static_asserts below).
    ScatterNDParams p;
    p.reduction = static_cast<ScatterReduction>(r);
    ITensor* x[3] = {};
    for (int32_t i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(n.tensor(i, x[i]));
    return n.setLayerOutputs(n.net().addLayer(p, {x[0], x[1], x[2]}));
  }
  const ConstTensor* in[3] = {};
  KILN_RETURN_IF_ERROR(threeConstants(n, in));
  const ConstTensor *data = in[0], *indices = in[1], *updates = in[2];
  if (indices->isFloat()) return n.error("indices must be integers");
  if (data->isFloat() != updates->isFloat())
    return n.error(std::string("data and updates must have one type, got ") +
                   dataTypeName(data->type) + " and " + dataTypeName(updates->type));
  const Dims& dd = data->dims;
  const Dims& id = indices->dims;
  if (id.nbDims < 1) return n.error("indices must have rank >= 1");
  const int32_t k = int32_t(id.d[id.nbDims - 1]);
  if (k < 1 || k > dd.nbDims)
    return n.error("the last dim of indices (" + std::to_string(id.d[id.nbDims - 1]) +
                   ") must be in [1, rank(data) = " + std::to_string(dd.nbDims) + "]");
  // updates must be indices.shape[:-1] + data.shape[k:].
  Dims want;
  for (int32_t a = 0; a + 1 < id.nbDims; ++a) want.d[want.nbDims++] = id.d[a];
  for (int32_t a = k; a < dd.nbDims; ++a) {
    if (want.nbDims == Dims::kMaxDims) return n.unsupportedError("updates would exceed 8 dims");
    want.d[want.nbDims++] = dd.d[a];
  }
  if (updates->dims != want)
    return n.error("updates have dims " + dimsText(updates->dims) + "; indices " + dimsText(id) +
                   " and data " + dimsText(dd) + " need " + dimsText(want));
  int64_t sliceSize = 1;
  for (int32_t a = k; a < dd.nbDims; ++a) sliceSize *= dd.d[a];
  const int64_t tuples = id.d[id.nbDims - 1] == 0 ? 0 : indices->count() / k;

  ConstTensor out = *data;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int32_t a = 0; a < k; ++a) {
      int64_t v = indices->i[size_t(t * k + a)];
      if (v < 0) v += dd.d[a];
      if (v < 0 || v >= dd.d[a])
        return n.error("index " + std::to_string(indices->i[size_t(t * k + a)]) + " on axis " +
                       std::to_string(a) + " is outside [" + std::to_string(-dd.d[a]) + ", " +
                       std::to_string(dd.d[a]) + ")");
      offset = offset * dd.d[a] + v;
    }
    offset *= sliceSize;
    for (int64_t e = 0; e < sliceSize; ++e) {
      const size_t at = size_t(offset + e), from = size_t(t * sliceSize + e);
      if (out.isFloat())
        out.f[at] = combine(r, out.f[at], updates->f[from]);
      else
        out.i[at] = combine(r, out.i[at], updates->i[from]);
    }
  }
  return n.setOutput(0, std::move(out));
}

// GatherElements(data, indices, axis): output[i] = data[i with axis replaced by indices[i]]; the
// output has the shape of indices, which must match data's on every other axis. Only on
// constants (BERT's token-type ids); a run-time GatherElements has no layer yet.
Status importGatherElements(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  if (!n.isConstant(0) || !n.isConstant(1))
    return n.unsupportedError(
        "GatherElements is supported on constant inputs only (it folds "
        "while parsing); this one reads a run-time tensor");
  const ConstTensor *data = nullptr, *indices = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(0, data));
  KILN_RETURN_IF_ERROR(n.constant(1, indices));
  if (indices->isFloat()) return n.error("indices must be integers");
  const Dims& dd = data->dims;
  const Dims& id = indices->dims;
  if (dd.nbDims < 1 || id.nbDims != dd.nbDims)
    return n.error("data " + dimsText(dd) + " and indices " + dimsText(id) +
                   " must have one rank, at least 1");
  int64_t axis = n.attrInt("axis", 0);
  if (axis < -dd.nbDims || axis >= dd.nbDims)
    return n.error("axis " + std::to_string(axis) + " is outside [" + std::to_string(-dd.nbDims) +
                   ", " + std::to_string(dd.nbDims) + ")");
  if (axis < 0) axis += dd.nbDims;
  for (int32_t a = 0; a < dd.nbDims; ++a)
    if (a != axis && id.d[a] > dd.d[a])
      return n.error("indices " + dimsText(id) + " exceed data " + dimsText(dd) + " on axis " +
                     std::to_string(a));
  ConstTensor out = ConstTensor::make(data->type, id);
  const int64_t count = indices->count();
  for (int64_t e = 0; e < count; ++e) {
    // The coordinates of element e of indices, and the data offset with axis replaced.
    int64_t rest = e, offset = 0, stride = 1;
    for (int32_t a = id.nbDims - 1; a >= 0; --a) {
      int64_t c = rest % id.d[a];
      rest /= id.d[a];
      if (a == axis) {
        const int64_t v = indices->i[size_t(e)];
        c = v < 0 ? v + dd.d[a] : v;
        if (c < 0 || c >= dd.d[a])
          return n.error("index " + std::to_string(v) + " is outside [" + std::to_string(-dd.d[a]) +
                         ", " + std::to_string(dd.d[a]) + ")");
      }
      offset += c * stride;
      stride *= dd.d[a];
    }
    if (out.isFloat())
      out.f[size_t(e)] = data->f[size_t(offset)];
    else
      out.i[size_t(e)] = data->i[size_t(offset)];
  }
  return n.setOutput(0, std::move(out));
}

}  // namespace

void addIndexImporters(ImporterTable& t) {
  t.push_back({"Range", importRange, {0, 1, 2}});
  t.push_back({"ScatterND", importScatterNd});
  t.push_back({"GatherElements", importGatherElements});
}

}  // namespace kiln::onnx_import
