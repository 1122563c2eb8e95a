// Ops that move data between tensors: Concat, Split, Slice, Gather, Expand, Tile, Pad, Trilu. On
// constant inputs they fold (shape arithmetic of exported models goes through these).
#include <algorithm>
#include <limits>

#include "onnx/import_context.h"

namespace kiln::onnx_import {
namespace {

// Row-major strides of `d`.
void stridesOf(const Dims& d, int64_t* s) {
  int64_t acc = 1;
  for (int32_t k = d.nbDims - 1; k >= 0; --k) s[k] = acc, acc *= d.d[k];
}

ConstTensor sliceConst(const ConstTensor& c, const SliceParams& p) {
  ConstTensor out = ConstTensor::make(c.type, p.outputDims);
  int64_t in[Dims::kMaxDims];
  stridesOf(c.dims, in);
  for (int64_t e = 0; e < out.count(); ++e) {
    int64_t rem = e, src = 0;
    for (int32_t k = p.outputDims.nbDims - 1; k >= 0; --k) {
      const int64_t j = rem % p.outputDims.d[k];
      rem /= p.outputDims.d[k];
      src += (p.starts.d[k] + j * p.steps.d[k]) * in[k];
    }
    out.set(e, c.at(src));
  }
  return out;
}

Status addSliceOutput(NodeContext& n, int32_t output, SliceParams p) {
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    return n.setOutput(output, sliceConst(*c, p));
  }
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  // With profiles, dims that read to the end at every corner become -1 (to the end).
  const std::string whose =
      n.node.output_size() > 1 ? "output " + std::to_string(output) + "'s" : "its";
  DimsSource source;
  KILN_RETURN_IF_ERROR(n.sliceParams(in->getDimensions(), p, whose, &source));
  ILayer* layer = nullptr;
  if (source.input.empty()) {
    layer = n.net().addSlice(*in, p);
  } else {
    std::copy(source.dimsOf, source.dimsOf + Dims::kMaxDims, p.outputDimsOf);
    ITensor* from = nullptr;
    KILN_RETURN_IF_ERROR(n.sourceTensor(source, from));
    layer = n.net().addLayer(p, {in, from});
  }
  if (!layer) return n.layerError();
  return n.setOutput(output, layer->getOutput(0));
}

SliceParams wholeSlice(const Dims& in) {
  SliceParams p;
  p.starts.nbDims = p.steps.nbDims = in.nbDims;
  p.outputDims = in;
  for (int32_t k = 0; k < in.nbDims; ++k) p.steps.d[k] = 1;
  return p;
}

Status importSlice(NodeContext& n) {
  const Dims in = n.dims(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
    starts = n.attrInts("starts");
    ends = n.attrInts("ends");
    axes = n.attrInts("axes");
  } else {
    KILN_RETURN_IF_ERROR(n.requireInputs(3, 5));
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(1, c));
    starts = toInts(*c);
    KILN_RETURN_IF_ERROR(n.constant(2, c));
    ends = toInts(*c);
    if (n.hasInput(3)) {
      KILN_RETURN_IF_ERROR(n.constant(3, c));
      axes = toInts(*c);
    }
    if (n.hasInput(4)) {
      KILN_RETURN_IF_ERROR(n.constant(4, c));
      steps = toInts(*c);
    }
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return n.error("starts, ends, axes and steps must have the same length");
  SliceParams p = wholeSlice(in);
  bool seen[Dims::kMaxDims] = {};
  for (size_t k = 0; k < starts.size(); ++k) {
    int32_t ax;
    KILN_RETURN_IF_ERROR(n.axis(axes[k], in.nbDims, ax));
    if (seen[ax]) return n.error("axis " + std::to_string(axes[k]) + " is repeated");
    seen[ax] = true;
    const int64_t dim = in.d[ax], step = steps[k];
    if (step == 0) return n.error("step must not be 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? -1 : s + dim;  // below -dim: before the start
    if (e < 0) e = e < -dim ? -1 : e + dim;
    int64_t count;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    // An empty forward slice keeps its start (in [0, dim]), so that x[1:] is one slice, to the
    // end, at every shape of a profile, a dim of 1 included.
    p.starts.d[ax] = count > 0 || step > 0 ? s : 0;
    p.steps.d[ax] = step;
    p.outputDims.d[ax] = count;
  }
  return addSliceOutput(n, 0, p);
}

Status importSplit(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 2));
  const Dims in = n.dims(0);
  int32_t ax;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", 0), in.nbDims, ax));
  std::vector<int64_t> split;
  if (n.opset() >= 13) {
    if (n.hasInput(1)) {
      const ConstTensor* c = nullptr;
      KILN_RETURN_IF_ERROR(n.constant(1, c));
      split = toInts(*c);
    }
  } else {
    split = n.attrInts("split");
  }
  const int32_t outs = n.node.output_size();
  if (outs < 1) return n.error("needs at least one output");
  // Opset 18: without split, num_outputs (required then) parts of ceil(size / num_outputs), the
  // last one smaller when the size does not divide; before, equal parts, one per output.
  const onnx::AttributeProto* numOutputs = n.attr("num_outputs");
  if (split.empty() && n.opset() >= 18) {
    if (!numOutputs) return n.error("needs the split input or the num_outputs attribute");
    const int64_t parts = n.attrInt("num_outputs", 0);
    if (parts != outs)
      return n.error("num_outputs is " + std::to_string(parts) + " but the node has " +
                     std::to_string(outs) + " outputs");
    const int64_t chunk = (in.d[ax] + parts - 1) / parts;
    if (chunk * (parts - 1) >= in.d[ax] && in.d[ax] > 0)
      return n.error("axis size " + std::to_string(in.d[ax]) + " does not split into " +
                     std::to_string(parts) + " parts of " + std::to_string(chunk) +
                     " (the last would be empty)");
    for (int64_t o = 0, left = in.d[ax]; o < parts; ++o, left -= chunk)
      split.push_back(std::min(chunk, left));
  } else if (!split.empty() && numOutputs) {
    return n.error("takes split or num_outputs, not both");
  }
  if (split.empty()) {
    if (in.d[ax] % outs != 0)
      return n.error("axis size " + std::to_string(in.d[ax]) + " does not split into " +
                     std::to_string(outs) + " equal parts");
    split.assign(size_t(outs), in.d[ax] / outs);
  }
  if (int32_t(split.size()) != outs)
    return n.error("split has a different length than the outputs");
  int64_t total = 0;
  for (int64_t s : split) {
    if (s < 0) return n.error("split sizes must not be negative");
    total += s;
  }
  if (total != in.d[ax]) return n.error("split sizes do not add up to the axis size");
  int64_t offset = 0;
  for (int32_t o = 0; o < outs; ++o) {
    SliceParams p = wholeSlice(in);
    p.starts.d[ax] = offset;
    p.outputDims.d[ax] = split[size_t(o)];
    offset += split[size_t(o)];
    KILN_RETURN_IF_ERROR(addSliceOutput(n, o, p));
  }
  return Status::ok();
}

Status importConcat(NodeContext& n) {
  if (n.nbInputs() < 1) return n.error("needs at least one input");
  const Dims first = n.dims(0);
  int32_t ax;
  const auto* axisAttr = n.attr("axis");
  if (!axisAttr && n.opset() >= 4) return n.error("attribute 'axis' is required");
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", 1), first.nbDims, ax));
  bool allConst = true;
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    if (!n.hasInput(i)) return n.error("input " + std::to_string(i) + " is missing");
    allConst &= n.isConstant(i);
    const Dims d = n.dims(i);
    bool ok = d.nbDims == first.nbDims;
    for (int32_t k = 0; ok && k < d.nbDims; ++k) ok = k == ax || d.d[k] == first.d[k];
    if (!ok) return n.error("input " + std::to_string(i) + " does not match input 0 off the axis");
  }
  if (allConst) {
    Dims od = first;
    od.d[ax] = 0;
    bool anyFloat = false;
    for (int32_t i = 0; i < n.nbInputs(); ++i) {
      od.d[ax] += n.dims(i).d[ax];
      anyFloat |= n.type(i) == DataType::kFLOAT;
    }
    ConstTensor out = ConstTensor::make(anyFloat ? DataType::kFLOAT : n.type(0), od);
    int64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < ax; ++k) outer *= od.d[k];
    for (int32_t k = ax + 1; k < od.nbDims; ++k) inner *= od.d[k];
    int64_t e = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int32_t i = 0; i < n.nbInputs(); ++i) {
        const ConstTensor* c = nullptr;
        KILN_RETURN_IF_ERROR(n.constant(i, c));
        const int64_t block = c->dims.d[ax] * inner;
        for (int64_t k = 0; k < block; ++k) out.set(e++, c->at(o * block + k));
      }
    }
    return n.setOutput(0, std::move(out));
  }
  std::vector<ITensor*> ins;
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    ITensor* t = nullptr;
    KILN_RETURN_IF_ERROR(n.tensor(i, t));
    ins.push_back(t);
  }
  ConcatenationParams p;
  p.axis = ax;
  return n.setLayerOutputs(n.net().addConcatenation(ins.data(), int32_t(ins.size()), p));
}

Status importGather(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  const Dims data = n.dims(0), idx = n.dims(1);
  int32_t ax;
  KILN_RETURN_IF_ERROR(n.axis(n.attrInt("axis", 0), data.nbDims, ax));
  if (n.type(1) != DataType::kINT32 && n.type(1) != DataType::kINT64)
    return n.error("indices must be int32 or int64");
  if (data.nbDims + idx.nbDims - 1 > Dims::kMaxDims) return n.unsupportedError("more than 8 dims");
  if (n.isConstant(0) && n.isConstant(1)) {
    const ConstTensor *c, *ic;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    KILN_RETURN_IF_ERROR(n.constant(1, ic));
    Dims od;
    for (int32_t k = 0; k < ax; ++k) od.d[od.nbDims++] = data.d[k];
    for (int32_t k = 0; k < idx.nbDims; ++k) od.d[od.nbDims++] = idx.d[k];
    for (int32_t k = ax + 1; k < data.nbDims; ++k) od.d[od.nbDims++] = data.d[k];
    if (!foldable(od)) return n.unsupportedError("the folded constant is too large");
    int64_t outer = 1, inner = 1;
    for (int32_t k = 0; k < ax; ++k) outer *= data.d[k];
    for (int32_t k = ax + 1; k < data.nbDims; ++k) inner *= data.d[k];
    ConstTensor out = ConstTensor::make(c->type, od);
    const int64_t dim = data.d[ax], ni = ic->count();
    int64_t e = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < ni; ++j) {
        int64_t at = saturatingInt64(ic->at(j));
        if (at < 0) at += dim;
        if (at < 0 || at >= dim)
          return n.error("index " + std::to_string(saturatingInt64(ic->at(j))) +
                         " is out of range");
        for (int64_t k = 0; k < inner; ++k) out.set(e++, c->at((o * dim + at) * inner + k));
      }
    }
    return n.setOutput(0, std::move(out));
  }
  ITensor *d, *i;
  KILN_RETURN_IF_ERROR(n.tensor(0, d));
  KILN_RETURN_IF_ERROR(n.tensor(1, i));
  GatherParams p;
  p.axis = ax;
  return n.setLayerOutputs(n.net().addGather(*d, *i, p));
}

Status importExpand(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  const ConstTensor* shape = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(1, shape));
  const Dims target = dimsOf(toInts(*shape));
  if (target.nbDims < 0) return n.unsupportedError("more than 8 dims");
  Dims out;
  if (!broadcast({n.dims(0), target}, out)) return n.error("input does not broadcast to the shape");
  if (n.isConstant(0) && foldable(out)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    ConstTensor r = ConstTensor::make(c->type, out);
    for (int64_t k = 0; k < r.count(); ++k) r.set(k, c->at(sourceIndex(out, c->dims, k)));
    return n.setOutput(0, std::move(r));
  }
  ITensor* in = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, in));
  ExpandParams p;
  p.shape = target;
  DimsSource source;
  KILN_RETURN_IF_ERROR(n.expandShape(n.dims(0), p.shape, &source));
  if (source.input.empty()) return n.setLayerOutputs(n.net().addExpand(*in, p));
  std::copy(source.dimsOf, source.dimsOf + Dims::kMaxDims, p.shapeDimsOf);
  ITensor* from = nullptr;
  KILN_RETURN_IF_ERROR(n.sourceTensor(source, from));
  return n.setLayerOutputs(n.net().addLayer(p, {in, from}));
}

Status importTile(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(2, 2));
  const ConstTensor* rep = nullptr;
  KILN_RETURN_IF_ERROR(n.constant(1, rep));
  const Dims in = n.dims(0);
  const std::vector<int64_t> r = toInts(*rep);
  if (int32_t(r.size()) != in.nbDims) return n.error("repeats must have one value per input dim");
  TileParams p;
  p.repeats = dimsOf(r);
  for (int64_t v : r)
    if (v < 0) return n.error("repeats must not be negative");
  if (n.isConstant(0)) {
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(0, c));
    Dims od = in;
    for (int32_t k = 0; k < in.nbDims; ++k) od.d[k] *= r[size_t(k)];
    if (!foldable(od)) return n.unsupportedError("the folded constant is too large");
    ConstTensor out = ConstTensor::make(c->type, od);
    int64_t s[Dims::kMaxDims];
    stridesOf(in, s);
    for (int64_t e = 0; e < out.count(); ++e) {
      int64_t rem = e, src = 0;
      for (int32_t k = od.nbDims - 1; k >= 0; --k) {
        src += ((rem % od.d[k]) % in.d[k]) * s[k];
        rem /= od.d[k];
      }
      out.set(e, c->at(src));
    }
    return n.setOutput(0, std::move(out));
  }
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  return n.setLayerOutputs(n.net().addTile(*t, p));
}

Status importPad(NodeContext& n) {
  const Dims in = n.dims(0);
  std::vector<int64_t> pads;
  PaddingParams p;
  const std::string mode = n.attrString("mode", "constant");
  if (!lookupName(mode,
                  {{"constant", PaddingMode::kCONSTANT},
                   {"reflect", PaddingMode::kREFLECT},
                   {"edge", PaddingMode::kEDGE}},
                  p.mode))
    return n.unsupportedError("mode '" + mode + "' is not supported");
  if (n.opset() < 11) {
    KILN_RETURN_IF_ERROR(n.requireInputs(1, 1));
    pads = n.attrInts("pads");
    p.value = n.attrFloat("value", 0.f);
  } else {
    KILN_RETURN_IF_ERROR(n.requireInputs(2, 4));
    const ConstTensor* c = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(1, c));
    pads = toInts(*c);
    if (n.hasInput(2)) {
      KILN_RETURN_IF_ERROR(n.constant(2, c));
      if (c->count() != 1) return n.error("constant_value must be a scalar");
      p.value = float(c->at(0));
    }
    // Opset 18's axes (a constant): pads then hold a begin and an end for each listed axis only;
    // the other dims are not padded.
    if (n.hasInput(3)) {
      KILN_RETURN_IF_ERROR(n.constant(3, c));
      const std::vector<int64_t> axes = toInts(*c);
      if (pads.size() != 2 * axes.size())
        return n.error("pads has " + std::to_string(pads.size()) + " values for " +
                       std::to_string(axes.size()) + " axes; expected two per axis");
      std::vector<int64_t> full(size_t(2 * in.nbDims), 0);
      std::vector<bool> seen(size_t(in.nbDims), false);
      for (size_t k = 0; k < axes.size(); ++k) {
        int32_t ax;
        KILN_RETURN_IF_ERROR(n.axis(axes[k], in.nbDims, ax));
        if (seen[size_t(ax)])
          return n.error("axis " + std::to_string(ax) + " appears twice in axes");
        seen[size_t(ax)] = true;
        full[size_t(ax)] = pads[k];
        full[size_t(ax + in.nbDims)] = pads[k + axes.size()];
      }
      pads = std::move(full);
    }
  }
  if (int32_t(pads.size()) != 2 * in.nbDims)
    return n.error("pads must have two values per input dim");
  for (int32_t k = 0; k < in.nbDims; ++k) {
    p.before[k] = pads[size_t(k)];
    p.after[k] = pads[size_t(k + in.nbDims)];
    if (p.before[k] < 0 || p.after[k] < 0)
      return n.unsupportedError("negative pads are not supported");
  }
  ITensor* t = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, t));
  return n.setLayerOutputs(n.net().addPadding(*t, p));
}

}  // namespace

// Trilu (opset 14): the upper (upper = 1, the default) or lower triangle of the last two dims;
// k, the diagonal's offset, is an optional scalar input that must be a constant. A constant x is
// left to the builder's constant folding.
Status importTrilu(NodeContext& n) {
  KILN_RETURN_IF_ERROR(n.requireInputs(1, 2));
  TriluParams p;
  p.upper = n.attrInt("upper", 1) != 0;
  if (n.hasInput(1)) {
    const ConstTensor* k = nullptr;
    KILN_RETURN_IF_ERROR(n.constant(1, k));
    if (k->isFloat() || k->count() != 1) return n.error("k must be one integer");
    p.k = k->i[0];
  }
  ITensor* x = nullptr;
  KILN_RETURN_IF_ERROR(n.tensor(0, x));
  return n.setLayerOutputs(n.net().addLayer(p, {x}));
}

void addTensorImporters(ImporterTable& t) {
  t.push_back({"Slice", importSlice, {1, 2, 3, 4}});
  t.push_back({"Split", importSplit, {1}});
  t.push_back({"Concat", importConcat});
  t.push_back({"Gather", importGather});
  t.push_back({"Expand", importExpand, {1}});
  t.push_back({"Tile", importTile, {1}});
  t.push_back({"Pad", importPad, {1, 2, 3}});
  t.push_back({"Trilu", importTrilu, {1}});
}

}  // namespace kiln::onnx_import
