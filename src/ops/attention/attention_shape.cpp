// The shape and type rule of Attention (kiln/ops/attention.h): Q [..., Sq, D], K [..., Sk, D]
// (or [..., D, Sk]), V [..., Sk, Dv] and an optional Mask that broadcasts to [..., Sq, Sk], all of
// one float type; the output is [batch..., Sq, Dv] with the numpy broadcast of the batch dims.
// A viewed Attention (head views) takes its sizes from the views and gives O in their order.
#include <cmath>
#include <string>
#include <vector>

#include "ops/attention/attention_views.h"
#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {
namespace {

constexpr const char* kLayer = "attention";

// The batch dims of x: all but its last two.
Dims batchDims(const Dims& x) {
  Dims b;
  b.nbDims = x.nbDims - 2;
  for (int32_t i = 0; i < b.nbDims; ++i) b.d[i] = x.d[i];
  return b;
}

// The shape rule of a viewed Attention (attention_views.h): each of Q, K and V is resolved to its
// roles; they must agree on B and H, Q and K on D, K and V on S.
Status viewedShapeRule(const AttentionParams& p, const Shapes& in, Shapes& out) {
  using R = AttentionParams::Role;
  if (p.keyTransposed)
    return invalidArgument(std::string(kLayer) + ": a viewed K is never transposed");
  attention::InputView views[3];
  std::string why;
  for (int i = 0; i < 3; ++i)
    if (!attention::resolveInputView(p, i, in[size_t(i)].dims, views[i], &why))
      return invalidArgument(std::string(kLayer) + ": " + why);
  auto sizeOf = [&](int i, int r) { return views[i].role[r].size; };
  for (int i = 1; i < 3; ++i)
    if (sizeOf(i, R::kBatch) != sizeOf(0, R::kBatch) ||
        sizeOf(i, R::kHeads) != sizeOf(0, R::kHeads))
      return invalidArgument(std::string(kLayer) + ": " + (i == 1 ? "K" : "V") + "'s view has " +
                             shape::str(sizeOf(i, R::kBatch)) + " x " +
                             shape::str(sizeOf(i, R::kHeads)) + " batch x heads, Q's " +
                             shape::str(sizeOf(0, R::kBatch)) + " x " +
                             shape::str(sizeOf(0, R::kHeads)));
  if (sizeOf(1, R::kHeadSize) != sizeOf(0, R::kHeadSize))
    return invalidArgument(std::string(kLayer) + ": K's view has head size " +
                           shape::str(sizeOf(1, R::kHeadSize)) + " but Q's " +
                           shape::str(sizeOf(0, R::kHeadSize)));
  const int64_t sk = sizeOf(1, R::kSequence);
  if (sk == 0)
    return invalidArgument(std::string(kLayer) + ": K's view has no keys; attention needs Sk >= 1");
  if (sizeOf(2, R::kSequence) != sk)
    return invalidArgument(std::string(kLayer) + ": V's view has " +
                           shape::str(sizeOf(2, R::kSequence)) + " rows but K has " +
                           shape::str(sk) + " keys");
  const int64_t sizes[4] = {sizeOf(0, R::kBatch), sizeOf(0, R::kHeads), sizeOf(0, R::kSequence),
                            sizeOf(2, R::kHeadSize)};
  if (in.size() == 4) {
    const Dims scores{4, {sizes[0], sizes[1], sizes[2], sk}};
    const Dims& m = in[3].dims;
    Dims b;
    Dims merged = m;  // [B * H, ...] read as [B, H, ...]
    if (attention::maskMergesBatch(m, sizes[0], sizes[1])) merged.d[m.nbDims - 3] = sizes[1];
    if (merged.nbDims > 4 || !shape::broadcastDims({scores, merged}, b, &why) || !(b == scores))
      return invalidArgument(std::string(kLayer) + ": Mask " + dimsString(m) +
                             " does not broadcast to the scores " + dimsString(scores));
  }
  Dims y;
  int64_t strides[4] = {};
  if (!attention::outputLayout(p, sizes, y, strides, &why))
    return invalidArgument(std::string(kLayer) + ": " + why);
  return shape::setOutput(kLayer, y, in[0].type, out);
}

}  // namespace

const InputCount Attention::inputs = {3, 4, "Q, K, V[, Mask]"};

Status Attention::shapeRule(const AttentionParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkFloatInputs(kLayer, in));
  static const char* const kNames[] = {"Q (input 0)", "K (input 1)", "V (input 2)",
                                       "Mask (input 3)"};
  for (size_t i = 0; i < 3; ++i)
    if (in[i].dims.nbDims < 2)
      return invalidArgument(std::string(kLayer) + ": " + kNames[i] + " is " +
                             dimsString(in[i].dims) + "; Q, K and V need rank >= 2");
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].type != in[0].type)
      return invalidArgument(std::string(kLayer) + ": " + kNames[i] + " is " +
                             dataTypeName(in[i].type) + " but Q is " + dataTypeName(in[0].type) +
                             "; all inputs must have one type");
  if (!std::isfinite(p.scale))
    return invalidArgument(std::string(kLayer) + ": scale " + std::to_string(p.scale) +
                           " must be finite");
  if (p.viewed) return viewedShapeRule(p, in, out);
  const Dims& q = in[0].dims;
  const Dims& k = in[1].dims;
  const Dims& v = in[2].dims;
  const int64_t sq = q.d[q.nbDims - 2], d = q.d[q.nbDims - 1];
  int64_t sk = 0, dk = 0;
  shape::matrixRowsCols(k, p.keyTransposed, &sk, &dk);
  if (dk != d)
    return invalidArgument(std::string(kLayer) + ": K " + dimsString(k) +
                           (p.keyTransposed ? " (transposed, [..., D, Sk])" : " ([..., Sk, D])") +
                           " has head size " + shape::str(dk) + " but Q " + dimsString(q) +
                           " has " + shape::str(d));
  // Zero keys would make every softmax row empty; no exporter writes that, and refusing it keeps
  // each kernel's arithmetic free of the special case.
  if (sk == 0)
    return invalidArgument(std::string(kLayer) + ": K " + dimsString(k) +
                           " has no keys; attention needs Sk >= 1");
  if (v.d[v.nbDims - 2] != sk)
    return invalidArgument(std::string(kLayer) + ": V " + dimsString(v) + " has " +
                           shape::str(v.d[v.nbDims - 2]) + " rows but K has " + shape::str(sk) +
                           " keys");
  std::string why;
  Dims batch;
  if (!shape::broadcastDims({batchDims(q), batchDims(k), batchDims(v)}, batch, &why))
    return invalidArgument(std::string(kLayer) + ": the batch dims of Q " + dimsString(q) + ", K " +
                           dimsString(k) + " and V " + dimsString(v) + " do not broadcast: " + why);
  if (batch.nbDims + 2 > Dims::kMaxDims)
    return invalidArgument(std::string(kLayer) + ": too many batch dims");
  Dims scores = batch;
  scores.nbDims = batch.nbDims + 2;
  scores.d[batch.nbDims] = sq;
  scores.d[batch.nbDims + 1] = sk;
  if (in.size() == 4) {
    const Dims& m = in[3].dims;
    Dims b;
    if (m.nbDims > scores.nbDims || !shape::broadcastDims({scores, m}, b, &why) || !(b == scores))
      return invalidArgument(std::string(kLayer) + ": Mask " + dimsString(m) +
                             " does not broadcast to the scores " + dimsString(scores));
  }
  Dims y = batch;
  y.nbDims = batch.nbDims + 2;
  y.d[batch.nbDims] = sq;
  y.d[batch.nbDims + 1] = v.d[v.nbDims - 1];
  return shape::setOutput(kLayer, y, in[0].type, out);
}

// Floats in FP32, or FP16/BF16 where the builder asks for half: the kernels keep the scores and
// the softmax in FP32 either way.
bool Attention::computeTypes(const AttentionParams&, std::vector<DataType>& types,
                             std::string& why) {
  return shape::floatsInFp32(name, types, why);
}

}  // namespace kiln::ops
