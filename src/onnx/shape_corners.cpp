// Shape-generic import driven by the profiles' corners (see shape_corners.h for why).
#include "onnx/shape_corners.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "kiln/onnx_parser.h"

namespace kiln::onnx_import {
namespace {

constexpr const char* kCannot = "kiln cannot yet carry shape arithmetic to run time";

std::string intsText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

std::vector<int64_t> dimsVector(const Dims& d) { return {d.d, d.d + std::max(d.nbDims, 0)}; }

bool allEqual(const std::vector<std::vector<int64_t>>& v) {
  for (const auto& x : v)
    if (x != v[0]) return false;
  return true;
}

// Ops whose inputs broadcast against each other: a constant of one value everywhere may be given
// to them at dims of 1 (materialize()).
bool broadcasts(const std::string& opType) {
  static const std::set<std::string> kBroadcasting = {"Add",
                                                      "Sub",
                                                      "Mul",
                                                      "Div",
                                                      "Pow",
                                                      "Max",
                                                      "Min",
                                                      "Where",
                                                      "Equal",
                                                      "Less",
                                                      "Greater",
                                                      "LessOrEqual",
                                                      "GreaterOrEqual",
                                                      "And",
                                                      "Or",
                                                      "Xor",
                                                      "Mod"};
  return kBroadcasting.count(opType) > 0;
}

void mix(uint64_t& h, uint64_t v) {  // FNV-1a over the 8 bytes of v
  for (int b = 0; b < 8; ++b) {
    h ^= (v >> (8 * b)) & 0xff;
    h *= 0x100000001b3ull;
  }
}

}  // namespace

// NodeContext's entry points: as given without profiles.
Status NodeContext::reshapeDims(const Dims& in, Dims& dims, DimsSource* source) {
  return ctx.corners ? ctx.corners->reshapeDims(*this, in, dims, source) : Status::ok();
}

Status NodeContext::reshape(ITensor& in, const Dims& dims, ILayer*& layer) {
  Dims d = dims;
  DimsSource source;
  KILN_RETURN_IF_ERROR(reshapeDims(in.getDimensions(), d, &source));
  layer = addReshape(ctx.net, in, d, source);
  return layer ? Status::ok() : layerError();
}

Status NodeContext::expandShape(const Dims& in, Dims& shape, DimsSource* source) {
  return ctx.corners ? ctx.corners->expandShape(*this, in, shape, source) : Status::ok();
}

Status NodeContext::sliceParams(const Dims& in, SliceParams& p, const std::string& whose,
                                DimsSource* source) {
  return ctx.corners ? ctx.corners->sliceParams(*this, in, p, whose, source) : Status::ok();
}

Status NodeContext::dimsFromInputs(const std::string& what, const Dims& dims, DimsSource& source) {
  source = DimsSource{};
  return ctx.corners ? ctx.corners->dimsFromInputs(*this, what, dims, source) : Status::ok();
}

bool NodeContext::makesLayers() const {
  return ctx.corners && !folding && ctx.corners->makesLayers(index);
}

Status NodeContext::literal(const std::string& what, const std::vector<int64_t>& values) {
  return ctx.corners ? ctx.corners->literal(*this, what, values) : Status::ok();
}

ShapeCorners::ShapeCorners(std::vector<Corner> corners, size_t working)
    : corners_(std::move(corners)), working_(working), records_(corners_.size()) {}

void ShapeCorners::beginCorner(size_t c) {
  current_ = c;
  final_ = false;
}

void ShapeCorners::endCorner(const INetworkDefinition& net) {
  auto& layers = records_[current_].layers;
  layers.clear();
  for (int32_t i = 0; i < net.getNbLayers(); ++i) {
    const ILayer* l = net.getLayer(i);
    std::vector<Dims> outs;
    for (int32_t k = 0; k < l->getNbOutputs(); ++k)
      outs.push_back(l->getOutput(k)->getDimensions());
    layers.push_back(std::move(outs));
  }
}

void ShapeCorners::beginFinal() {
  final_ = true;
  materializedSeen_.clear();
}

bool ShapeCorners::chooseLayerNodes(const onnx::GraphProto& g) {
  layerNodes_.clear();
  tensorInputs_.clear();
  auto snapshots = [&](const std::string& name) {
    std::vector<const Snapshot*> at;
    for (const Record& r : records_) {
      auto it = r.values.find(name);
      at.push_back(it == r.values.end() ? nullptr : &it->second);
    }
    return at;
  };
  // A value computed at parse time at some corner, and not the same at all of them.
  auto dynamic = [&](const std::string& name) {
    if (name.empty()) return false;
    std::vector<std::string> text;
    bool any = false;
    return snapshotsDiffer(snapshots(name), text, any) && any;
  };
  // One value in every element at every corner: materialize() gives a broadcasting reader that
  // value at dims of 1, which needs no layer.
  auto oneValue = [&](const std::string& name) {
    const std::vector<const Snapshot*> at = snapshots(name);
    for (const Snapshot* s : at)
      if (!s || !s->uniform || s->first != at[0]->first) return false;
    return true;
  };
  std::unordered_map<std::string, int32_t> producer;
  std::set<std::string> read;  // values a node or a graph output reads
  for (int32_t m = 0; m < g.node_size(); ++m) {
    for (const auto& out : g.node(m).output()) producer[out] = m;
    for (const auto& in : g.node(m).input()) read.insert(in);
  }
  for (const auto& out : g.output()) read.insert(out.name());
  const Record& working = records_[working_];
  auto makesTensor = [&](const onnx::NodeProto& node) {
    for (const auto& out : node.output())
      if (!out.empty() && read.count(out) && !working.values.count(out)) return true;
    return false;
  };
  auto mark = [&](const std::string& value) {
    auto it = producer.find(value);
    if (it != producer.end()) layerNodes_.insert(it->second);
  };
  for (const auto& out : g.output())
    if (dynamic(out.name())) mark(out.name());
  // Producers come before their readers, so one backward pass closes the set.
  for (int32_t m = g.node_size() - 1; m >= 0; --m) {
    const onnx::NodeProto& node = g.node(m);
    const bool marked = layerNodes_.count(m) > 0;
    if (!marked && !makesTensor(node)) continue;  // folded: its inputs are shape arithmetic
    const std::vector<int32_t>& operands = onnxConstantInputs(node.op_type());
    for (int32_t i = 0; i < node.input_size() && i < 32; ++i) {
      const std::string& in = node.input(i);
      if (in.empty() || std::find(operands.begin(), operands.end(), i) != operands.end()) continue;
      const bool varies = dynamic(in);
      if (!varies && !marked) continue;
      if (varies && !marked && broadcasts(node.op_type()) && oneValue(in)) continue;
      tensorInputs_[m] |= uint32_t(1) << i;
      if (varies) mark(in);
    }
  }
  if (layerNodes_.empty()) return false;
  records_.assign(corners_.size(), Record{});  // the corners are parsed again
  return true;
}

bool ShapeCorners::readsAsTensor(int32_t node, int32_t input) const {
  auto it = tensorInputs_.find(node);
  return it != tensorInputs_.end() && input >= 0 && input < 32 && (it->second >> input & 1u);
}

ShapeCorners::Snapshot ShapeCorners::snapshot(const ConstTensor& c) {
  Snapshot s;
  uint64_t h = 0xcbf29ce484222325ull;
  mix(h, uint64_t(c.type));
  mix(h, uint64_t(c.dims.nbDims));
  for (int32_t k = 0; k < c.dims.nbDims; ++k) mix(h, uint64_t(c.dims.d[k]));
  if (c.isFloat()) {
    for (float f : c.f) {
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      mix(h, bits);
    }
  } else {
    for (int64_t v : c.i) mix(h, uint64_t(v));
  }
  s.hash = h;
  auto bits = [&](int64_t k) {
    uint64_t b = uint64_t(c.type) << 56;
    if (c.isFloat()) {
      uint32_t f;
      std::memcpy(&f, &c.f[size_t(k)], 4);
      return b ^ f;
    }
    return b ^ uint64_t(c.i[size_t(k)]);
  };
  if (c.count() > 0) {
    s.first = bits(0);
    s.uniform = true;
    for (int64_t k = 1; k < c.count() && s.uniform; ++k) s.uniform = bits(k) == s.first;
  }
  constexpr int64_t kShown = 8;
  s.text = "[";
  for (int64_t k = 0; k < std::min(c.count(), kShown); ++k) {
    char buf[32];
    if (c.isFloat())
      std::snprintf(buf, sizeof buf, "%g", double(c.f[size_t(k)]));
    else
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(c.i[size_t(k)]));
    s.text += (k ? "," : "") + std::string(buf);
  }
  s.text += c.count() > kShown ? ",...]" : "]";
  if (c.dims.nbDims != 1) s.text += " of shape " + dimsText(c.dims);
  return s;
}

void ShapeCorners::record(const NodeContext& n, const std::string& key, std::vector<int64_t> v) {
  records_[current_].sites[{n.index, key}] = std::move(v);
}

Status ShapeCorners::recorded(const NodeContext& n, const std::string& key,
                              std::vector<std::vector<int64_t>>& out) const {
  out.clear();
  for (size_t c = 0; c < corners_.size(); ++c) {
    auto it = records_[c].sites.find({n.index, key});
    if (it == records_[c].sites.end())
      return n.unsupportedError("is imported differently at " + corners_[c].label + " than at " +
                                working().label + ", so kiln cannot make it shape-generic");
    out.push_back(it->second);
  }
  return Status::ok();
}

std::string ShapeCorners::atCorners(const std::vector<std::string>& perCorner) const {
  std::string s;
  for (size_t c = 0; c < perCorner.size(); ++c)
    s += (c ? ", " : "") + perCorner[c] + " at " + corners_[c].label;
  return s;
}

Status ShapeCorners::resultAndInput(NodeContext& n, const std::string& key, const Dims& in,
                                    const Dims& result, std::vector<std::vector<int64_t>>& results,
                                    std::vector<std::vector<int64_t>>& ins) {
  if (!final_) {
    record(n, key + " in", dimsVector(in));
    record(n, key, dimsVector(result));
    return Status::ok();
  }
  KILN_RETURN_IF_ERROR(recorded(n, key, results));
  return recorded(n, key + " in", ins);
}

bool ShapeCorners::snapshotsDiffer(const std::vector<const Snapshot*>& at,
                                   std::vector<std::string>& text, bool& any) {
  const Snapshot* first = nullptr;
  bool differs = false;
  for (const Snapshot* s : at) {
    text.push_back(s ? s->text : "none");
    if (!s)
      differs = true;
    else if (!first)
      first = s;
    else
      differs = differs || first->hash != s->hash;
  }
  any = first != nullptr;
  return differs;
}

Status ShapeCorners::inputDimWithValues(NodeContext& n, int32_t k,
                                        const std::vector<int64_t>& values,
                                        std::pair<std::string, int32_t>& found, bool& any) const {
  std::vector<std::pair<std::string, int32_t>> matches;
  for (const auto& [name, dims] : working().shapes) {
    for (int32_t a = 0; a < dims.nbDims; ++a) {
      bool all = true;
      for (size_t c = 0; c < corners_.size() && all; ++c) {
        auto it = corners_[c].shapes.find(name);
        all =
            it != corners_[c].shapes.end() && a < it->second.nbDims && it->second.d[a] == values[c];
      }
      if (all) matches.emplace_back(name, a);
    }
  }
  any = !matches.empty();
  if (!any) return Status::ok();
  found = matches[0];
  // Several that agree at every corner are one dim only when the network says so: one name.
  auto nameOf = [&](const std::pair<std::string, int32_t>& m) -> std::string {
    for (int32_t i = 0; i < n.net().getNbInputs(); ++i) {
      const ITensor* t = n.net().getInput(i);
      if (m.first == t->getName()) {
        const char* d = t->getDimensionName(m.second);
        return d ? d : "";
      }
    }
    return "";
  };
  const std::string first = nameOf(matches[0]);
  for (size_t j = 1; j < matches.size(); ++j) {
    const auto& m = matches[j];
    if (!first.empty() && nameOf(m) == first) continue;
    std::vector<std::string> text;
    for (int64_t v : values) text.push_back(std::to_string(v));
    return n.unsupportedError(
        "its result's dim " + std::to_string(k) + " (" + atCorners(text) + ") is dim " +
        std::to_string(matches[0].second) + " of input '" + matches[0].first + "' or dim " +
        std::to_string(m.second) + " of input '" + m.first +
        "': they are equal at every corner of the profiles. Give profiles where they differ");
  }
  return Status::ok();
}

Status ShapeCorners::takeFromInput(NodeContext& n, const std::string& what, int32_t k,
                                   const std::vector<int64_t>& values, const std::string& refusal,
                                   DimsSource& source) const {
  std::pair<std::string, int32_t> found;
  bool any = false;
  KILN_RETURN_IF_ERROR(inputDimWithValues(n, k, values, found, any));
  if (!any) return n.unsupportedError(refusal + "; " + kCannot);
  const std::string dim = what + " " + std::to_string(k);
  if (!source.input.empty() && source.input != found.first)
    return n.unsupportedError(dim + " is a dim of input '" + found.first +
                              "' and another is one of '" + source.input +
                              "'; kiln takes a layer's dims from one input");
  source.input = found.first;
  source.dimsOf[k] = found.second + 1;
  return Status::ok();
}

Status ShapeCorners::dimsFromInputs(NodeContext& n, const std::string& what, const Dims& dims,
                                    DimsSource& source) {
  const std::string key = n.nextSiteKey("dims");
  if (!final_) {
    record(n, key, dimsVector(dims));
    return Status::ok();
  }
  std::vector<std::vector<int64_t>> at;
  KILN_RETURN_IF_ERROR(recorded(n, key, at));
  if (at[working_] != dimsVector(dims))
    return n.unsupportedError("is imported differently at the working shape than at " +
                              working().label + ", so kiln cannot make it shape-generic");
  std::vector<std::string> shapes;
  for (const auto& v : at) shapes.push_back(intsText(v));
  for (const auto& v : at)
    if (v.size() != size_t(dims.nbDims))
      return n.unsupportedError("the rank of " + what + " depends on the input shapes (" +
                                atCorners(shapes) + "); " + kCannot);
  for (int32_t k = 0; k < dims.nbDims; ++k) {
    std::vector<int64_t> values;
    for (const auto& v : at) values.push_back(v[size_t(k)]);
    if (std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; }))
      continue;
    std::vector<std::string> text;
    for (int64_t v : values) text.push_back(std::to_string(v));
    KILN_RETURN_IF_ERROR(takeFromInput(n, what + " dim", k, values,
                                       what + " dim " + std::to_string(k) +
                                           " depends on the input shapes (" + atCorners(text) +
                                           ") and is no dynamic input's dim",
                                       source));
  }
  return Status::ok();
}

Status ShapeCorners::reshapeDims(NodeContext& n, const Dims& in, Dims& dims, DimsSource* source) {
  std::vector<std::vector<int64_t>> outs, ins;
  KILN_RETURN_IF_ERROR(resultAndInput(n, n.nextSiteKey("reshape"), in, dims, outs, ins));
  if (!final_) return Status::ok();
  if (outs[working_] != dimsVector(dims) || ins[working_] != dimsVector(in))
    return n.unsupportedError("is imported differently at the working shape than at " +
                              working().label + ", so kiln cannot make it shape-generic");
  Dims generic = dims;
  std::vector<int32_t> open;                                    // dims neither literal nor copied
  std::map<int32_t, std::pair<std::string, int32_t>> inputDim;  // dim k is that input's dim
  for (size_t c = 0; c < outs.size(); ++c)
    if (outs[c].size() != size_t(dims.nbDims))
      return n.unsupportedError("the rank of its result depends on the input shapes (" +
                                std::to_string(outs[c].size()) + " at " + corners_[c].label + ", " +
                                std::to_string(dims.nbDims) + " at " + working().label + "); " +
                                kCannot);
  for (int32_t k = 0; k < dims.nbDims; ++k) {
    bool same = true, copy = true;
    std::vector<int64_t> values;
    for (size_t c = 0; c < outs.size(); ++c) {
      same = same && outs[c][size_t(k)] == outs[0][size_t(k)];
      copy = copy && size_t(k) < ins[c].size() && ins[c][size_t(k)] == outs[c][size_t(k)];
      values.push_back(outs[c][size_t(k)]);
    }
    if (same) continue;
    // A dim that is one of two input dims at every corner could be either: the corners cannot
    // tell a copy, a swap or a source apart, so neither can kiln (an error).
    std::pair<std::string, int32_t> found;
    bool any = false;
    KILN_RETURN_IF_ERROR(inputDimWithValues(n, k, values, found, any));
    if (any) inputDim[k] = found;
    if (copy)
      generic.d[k] = 0;
    else
      open.push_back(k);
  }
  if (open.size() > 1 && source) {
    // Dims that are a dynamic input's dims come from that input; one other may stay -1.
    std::vector<int32_t> still;
    for (int32_t k : open) {
      auto it = inputDim.find(k);
      if (it == inputDim.end() || (!source->input.empty() && source->input != it->second.first)) {
        still.push_back(k);
        continue;
      }
      source->input = it->second.first;
      source->dimsOf[k] = it->second.second + 1;
    }
    if (still.size() <= 1)
      open = still;
    else
      *source = DimsSource{};  // as before: refused below
  }
  if (open.size() > 1) {
    std::string which;
    for (size_t j = 0; j < open.size(); ++j)
      which += (j ? (j + 1 == open.size() ? " and " : ", ") : "") + std::to_string(open[j]);
    std::vector<std::string> values;
    for (const auto& o : outs) values.push_back(intsText(o));
    return n.unsupportedError(
        "its result's shape depends on the input shapes in more than one dim"
        " (dims " +
        which + ": " + atCorners(values) + "); " + kCannot);
  }
  if (open.size() == 1) generic.d[open[0]] = -1;
  dims = generic;
  return Status::ok();
}

Status ShapeCorners::expandShape(NodeContext& n, const Dims& in, Dims& shape, DimsSource* source) {
  n.markGeneric(1);
  std::vector<std::vector<int64_t>> targets, ins;
  KILN_RETURN_IF_ERROR(resultAndInput(n, n.nextSiteKey("expand"), in, shape, targets, ins));
  if (!final_) return Status::ok();
  std::vector<std::string> values;
  for (const auto& t : targets) values.push_back(intsText(t));
  const std::string operand = "input 1 ('" + n.node.input(1) + "')";
  for (const auto& t : targets)
    if (t.size() != size_t(shape.nbDims))
      return n.unsupportedError(operand + " has a rank that depends on the input shapes (" +
                                atCorners(values) + "); " + kCannot);
  Dims generic = shape;
  for (int32_t k = 0; k < shape.nbDims; ++k) {
    bool same = true, kept = true;
    for (size_t c = 0; c < targets.size(); ++c) {
      const auto& t = targets[c];
      same = same && t[size_t(k)] == targets[0][size_t(k)];
      const int64_t j = int64_t(k) - (int64_t(t.size()) - int64_t(ins[c].size()));
      kept = kept && j >= 0 && ins[c][size_t(j)] == t[size_t(k)];
    }
    if (same) continue;
    if (kept) {
      generic.d[k] = 1;  // broadcasting keeps the input's dim
      continue;
    }
    if (!source)
      return n.unsupportedError(operand + " dim " + std::to_string(k) +
                                " depends on the input shapes and is not the input's own dim (" +
                                atCorners(values) + "); " + kCannot);
    // A dynamic input's dim at every corner: taken from that input at run time.
    std::vector<int64_t> dimValues;
    for (const auto& t : targets) dimValues.push_back(t[size_t(k)]);
    KILN_RETURN_IF_ERROR(takeFromInput(n, operand + " dim", k, dimValues,
                                       operand + " dim " + std::to_string(k) +
                                           " depends on the input shapes and is neither the "
                                           "input's own dim nor a dynamic input's dim (" +
                                           atCorners(values) + ")",
                                       *source));
  }
  shape = generic;
  return Status::ok();
}

Status ShapeCorners::literal(NodeContext& n, const std::string& what,
                             const std::vector<int64_t>& values) {
  const std::string key = n.nextSiteKey("literal");
  if (!final_) {
    record(n, key, values);
    return Status::ok();
  }
  std::vector<std::vector<int64_t>> at;
  KILN_RETURN_IF_ERROR(recorded(n, key, at));
  if (allEqual(at)) return Status::ok();
  std::vector<std::string> text;
  for (const auto& v : at) text.push_back(intsText(v));
  std::string operands;  // the constant inputs behind them, where those differ too
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    std::string values;
    if (inputVaries(n, i, values))
      operands += "; input " + std::to_string(i) + " ('" + n.node.input(i) + "') is " + values;
  }
  return n.unsupportedError(what + " depend on the input shapes (" + atCorners(text) + operands +
                            "), and the layer keeps them literally; " + kCannot);
}

Status ShapeCorners::sliceParams(NodeContext& n, const Dims& in, SliceParams& p,
                                 const std::string& whose, DimsSource* source) {
  std::vector<std::vector<int64_t>> outs, ins;
  KILN_RETURN_IF_ERROR(resultAndInput(n, n.nextSiteKey("slice"), in, p.outputDims, outs, ins));
  KILN_RETURN_IF_ERROR(literal(n, whose + " slice steps", dimsVector(p.steps)));
  const std::string startsKey = n.nextSiteKey("slice starts");
  if (!final_) {
    record(n, startsKey, dimsVector(p.starts));
    return Status::ok();
  }
  std::vector<std::vector<int64_t>> starts;
  KILN_RETURN_IF_ERROR(recorded(n, startsKey, starts));
  std::vector<std::string> values, startText;
  for (const auto& o : outs) values.push_back(intsText(o));
  for (const auto& v : starts) startText.push_back(intsText(v));
  const size_t rank = size_t(p.outputDims.nbDims);
  for (size_t c = 0; c < outs.size(); ++c)
    if (outs[c].size() != rank || ins[c].size() != rank || starts[c].size() != rank)
      return n.unsupportedError("the rank of " + whose + " slice depends on the input shapes (" +
                                atCorners(values) + "); " + kCannot);
  for (int32_t k = 0; k < p.outputDims.nbDims; ++k) {
    const size_t K = size_t(k);
    const int64_t step = p.steps.d[k];
    // A start that follows the axis' dim stays a fixed distance from its end (x[-2:]): the
    // distance the corners agree on, ONNX's clamp at 0 included.
    bool startVaries = false;
    int64_t fromEnd = 0;
    for (size_t c = 0; c < outs.size(); ++c) {
      startVaries = startVaries || starts[c][K] != starts[0][K];
      if (starts[c][K] > 0 && ins[c][K] > starts[c][K] && fromEnd == 0)
        fromEnd = ins[c][K] - starts[c][K];
    }
    if (startVaries) {
      bool fits = fromEnd > 0;
      for (size_t c = 0; c < outs.size() && fits; ++c)
        fits = starts[c][K] == SliceParams::startOf(0, fromEnd, ins[c][K]);
      if (!fits)
        return n.unsupportedError(whose + " slice start on axis " + std::to_string(k) +
                                  " depends on the input shapes (starts " + atCorners(startText) +
                                  ") and is not a fixed distance from the end of the axis; " +
                                  kCannot);
      p.starts.d[k] = 0;
      p.startFromEnd[k] = fromEnd;
    }
    std::vector<int64_t> startAt;  // per corner
    for (size_t c = 0; c < outs.size(); ++c)
      startAt.push_back(SliceParams::startOf(starts[c][K], p.startFromEnd[k], ins[c][K]));
    bool same = true;
    for (size_t c = 0; c < outs.size(); ++c) same = same && outs[c][K] == outs[0][K];
    if (same && !startVaries) continue;
    if (same && outs[0][K] != 0) {  // a fixed count from a moving start (x[-2:] past min)
      bool inside = true;
      for (size_t c = 0; c < outs.size() && inside; ++c)
        inside = startAt[c] >= 0 && startAt[c] + (outs[c][K] - 1) * step < ins[c][K] &&
                 startAt[c] + (outs[c][K] - 1) * step >= 0;
      if (inside) continue;
    }
    bool toEnd = true;
    int64_t trim = 0;
    if (step > 0) {
      // To the end of the axis, or to `trim` elements before it (x[:, :-1]): the trim that the
      // working shape gives, checked at every corner.
      const int64_t dim = ins[working_][K], out = outs[working_][K], start = startAt[working_];
      trim = out > 0 ? dim - start - (out - 1) * step - 1 : 0;
      toEnd = trim >= 0 && startAt[working_] >= 0;
      for (size_t c = 0; c < outs.size() && toEnd; ++c) {
        const int64_t stop = ins[c][K] - trim;
        const int64_t fit = startAt[c] >= stop ? 0 : (stop - startAt[c] - 1) / step + 1;
        toEnd = startAt[c] >= 0 && outs[c][K] == fit;
      }
    } else {  // down to element 0 (x.flip(k)), from wherever the start is
      for (size_t c = 0; c < outs.size() && toEnd; ++c) {
        const int64_t dim = ins[c][K], start = startAt[c];
        toEnd = dim == 0 ? outs[c][K] == 0
                         : start >= 0 && start < dim && outs[c][K] == start / -step + 1;
      }
    }
    if (toEnd) {
      p.outputDims.d[k] = -1;
      p.beforeEnd[k] = trim;
      continue;
    }
    if (!source || startVaries)
      return n.unsupportedError(whose + " slice output dim " + std::to_string(k) +
                                " depends on the input shapes and does not read to the end of "
                                "the axis (output dims " +
                                atCorners(values) + "); " + kCannot);
    // x[:, :sequence] of a longer axis: the dim of a dynamic input at every corner.
    std::vector<int64_t> dimValues;
    for (const auto& o : outs) dimValues.push_back(o[K]);
    KILN_RETURN_IF_ERROR(takeFromInput(n, whose + " slice output dim", k, dimValues,
                                       whose + " slice output dim " + std::to_string(k) +
                                           " depends on the input shapes, does not read to the "
                                           "end of the axis and is no dynamic input's dim "
                                           "(output dims " +
                                           atCorners(values) + ")",
                                       *source));
  }
  for (int32_t i = 1; i < n.nbInputs(); ++i) n.markGeneric(i);  // the bounds, now generic
  return Status::ok();
}

bool ShapeCorners::inputVaries(const NodeContext& n, int32_t i, std::string& values) const {
  if (!n.hasInput(i) || !n.isConstant(i)) return false;
  const std::string& name = n.node.input(i);
  std::vector<const Snapshot*> at;
  for (const Record& r : records_) {
    auto it = r.values.find(name);
    at.push_back(it == r.values.end() ? nullptr : &it->second);
  }
  std::vector<std::string> text;
  bool any = false;
  const bool differs = snapshotsDiffer(at, text, any);
  values = atCorners(text);
  return any && differs;  // values of the graph only: initializers are the same everywhere
}

Status ShapeCorners::afterNode(NodeContext& n) {
  const ImportContext& ctx = n.ctx;
  if (!final_) {
    for (const auto& out : n.node.output()) {
      auto it = ctx.values.find(out);
      if (!out.empty() && it != ctx.values.end() && it->second.constant)
        records_[current_].values[out] = snapshot(*it->second.constant);
    }
    return Status::ok();
  }
  bool makesLayers = false;
  for (const auto& out : n.node.output()) {
    auto it = ctx.values.find(out);
    makesLayers = makesLayers || (!out.empty() && it != ctx.values.end() && it->second.tensor &&
                                  !it->second.constant);
  }
  if (!makesLayers) return Status::ok();
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    std::string values;
    if (n.isGeneric(i) || !inputVaries(n, i, values)) continue;
    return n.unsupportedError("input " + std::to_string(i) + " ('" + n.node.input(i) +
                              "') depends on the input shapes (" + values + "); " + kCannot);
  }
  return Status::ok();
}

Status ShapeCorners::materialize(const ImportContext& ctx, const std::string& name,
                                 const ConstTensor& c, bool& asOnes) {
  asOnes = false;
  if (!final_) {
    records_[current_].materialized[name].push_back(snapshot(c));
    return Status::ok();
  }
  const size_t use = materializedSeen_[name]++;
  std::vector<const Snapshot*> at;
  for (const Record& r : records_) {
    auto it = r.materialized.find(name);
    at.push_back(it == r.materialized.end() || it->second.size() <= use ? nullptr
                                                                        : &it->second[use]);
  }
  std::vector<std::string> text;
  bool any = false;
  if (!snapshotsDiffer(at, text, any)) return Status::ok();
  // One value everywhere, read by a node that broadcasts: that value at dims of 1 does the same.
  bool oneValue = ctx.current && broadcasts(ctx.current->node.op_type());
  for (const Snapshot* s : at) oneValue = oneValue && s && s->uniform && s->first == at[0]->first;
  if (oneValue) {
    asOnes = true;
    // The node's input holding it is shape-generic now (afterNode does not refuse it).
    for (int32_t i = 0; i < ctx.current->nbInputs(); ++i) {
      auto it = ctx.values.find(ctx.current->node.input(i));
      if (it != ctx.values.end() && it->second.constant.get() == &c) ctx.current->markGeneric(i);
    }
    return Status::ok();
  }
  // Name the node that computed it, where it is a value of the graph.
  std::string shown = name, from;
  for (const auto& [value, v] : ctx.values) {
    if (v.constant.get() != &c || !ctx.graph) continue;
    for (int i = 0; i < ctx.graph->node_size() && from.empty(); ++i) {
      const auto& node = ctx.graph->node(i);
      for (const auto& out : node.output())
        if (out == value)
          from = ", computed by node " + std::to_string(i) + " '" + node.name() + "' (" +
                 node.op_type() + ")";
    }
    if (!from.empty()) {
      shown = value;
      break;
    }
  }
  const std::string message = "the constant '" + shown + "'" + from +
                              ", becomes a network tensor but depends on the input shapes (" +
                              atCorners(text) + "); " + kCannot;
  return ctx.current ? ctx.current->unsupportedError(message) : unsupported(message);
}

Status ShapeCorners::moveTo(INetworkDefinition& net, const Corner& target) {
  Status s = net.setWorkingShapes(target.shapes);
  return s ? s
           : unsupported("the network could not be re-inferred at " + target.label + ": " +
                         s.message());
}

Status ShapeCorners::verify(INetworkDefinition& net) {
  Status result;
  for (size_t c = 0; c < corners_.size() && result; ++c) {
    const Corner& corner = corners_[c];
    result = moveTo(net, corner);
    if (!result) break;
    const auto& want = records_[c].layers;
    if (size_t(net.getNbLayers()) != want.size()) {
      result = internalError("the network has " + std::to_string(net.getNbLayers()) +
                             " layers but the parse at " + corner.label + " has " +
                             std::to_string(want.size()));
      break;
    }
    for (int32_t i = 0; i < net.getNbLayers() && result; ++i) {
      if (asOnesLayers_.count(i)) continue;
      const ILayer* l = net.getLayer(i);
      for (int32_t k = 0; k < l->getNbOutputs() && result; ++k) {
        const Dims got = l->getOutput(k)->getDimensions();
        const Dims expected =
            size_t(k) < want[size_t(i)].size() ? want[size_t(i)][size_t(k)] : Dims{};
        if (got == expected) continue;
        result = unsupported(
            "layer " + std::to_string(i) + " '" + l->getName() + "' output " + std::to_string(k) +
            " '" + l->getOutput(k)->getName() + "' has dims " + dimsText(got) + " at " +
            corner.label + ", but the model parsed at that shape gives it " + dimsText(expected) +
            "; its layer bakes in a value that depends on the input shapes, " + "and " + kCannot);
      }
    }
  }
  Status restore = moveTo(net, working());
  return result ? restore : result;
}

}  // namespace kiln::onnx_import
