// Identity elimination: layers that leave their input as it is are bypassed, their consumers
// reading the input directly.
//
// What counts as doing nothing (the output has the input's dims and type in every case; in a
// profile build, at every corner of every profile):
//  - a shuffle whose transposes keep the element order (they only move size-1 dims, if any;
//    a reshape never reorders);
//  - a cast (reformat) to the type and format the tensor already has;
//  - x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 with an all-zero or all-one constant whose
//    broadcast does not change x's shape (x + 0 turns -0 into +0, which kiln, like TensorRT and
//    ONNX Runtime, does not keep);
//  - a one-input concatenation, a slice of everything in order, a padding of zero everywhere, a
//    tile by ones, an expand to the input's own shape.
//
// A layer whose output is a network output is removed only when the output name can move
// safely: its input is made by another layer and is not itself a network output; that layer
// then produces the output tensor (name and all) directly. Otherwise (the input is a network
// input or a constant, or another output) the layer stays, because the plan must have a step
// that writes the caller's output buffer.
#include "builder/passes/constant_values.h"
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"
#include "ops/op_table.h"

namespace kiln::passes {
namespace {

// A permutation of dims `d` keeps the element order iff the dims larger than 1 stay in order.
bool keepsOrder(const int32_t* perm, const Dims& d) {
  int32_t last = -1;
  for (int32_t i = 0; i < d.nbDims; ++i) {
    if (perm[i] < 0 || perm[i] >= d.nbDims) return false;
    if (d.d[perm[i]] == 1) continue;
    if (perm[i] < last) return false;
    last = perm[i];
  }
  return true;
}

bool shuffleIsIdentity(const ShuffleParams& p, const Dims& in, std::string& what) {
  if (p.hasFirstTranspose && !keepsOrder(p.firstTranspose, in)) return false;
  if (p.hasSecondTranspose) {
    // The second transpose applies to the dims after the first transpose and the reshape.
    ShuffleParams before = p;
    before.hasSecondTranspose = false;
    std::vector<TensorShape> out;
    if (!inferLayerOutputs(LayerType::kSHUFFLE, before, {TensorShape{in, DataType::kFLOAT}}, out))
      return false;
    if (!keepsOrder(p.secondTranspose, out[0].dims)) return false;
  }
  what = p.hasFirstTranspose || p.hasSecondTranspose
             ? "its transposes keep the element order and the dims"
             : "its reshape keeps the dims";
  return true;
}

bool allZero(const int64_t* v, int32_t n) {
  for (int32_t i = 0; i < n; ++i)
    if (v[i] != 0) return false;
  return true;
}

// Which input passes through unchanged (or -1), and in words why.
int32_t passThrough(const Graph& g, const GraphNode& node, std::string& what) {
  if (node.outputs.size() != 1 || node.inputs.empty()) return -1;
  const GraphTensor& out = g.tensors[size_t(node.outputs[0])];
  // In a profile build, the same at every corner too (GraphTensor::rangeDims).
  auto same = [&](int32_t t) {
    const GraphTensor& in = g.tensors[size_t(t)];
    return in.shape.dims == out.shape.dims && in.shape.type == out.shape.type &&
           in.rangeDims == out.rangeDims;
  };
  const int32_t x = node.inputs[0];
  auto passes = [&](int32_t t, const char* why) {
    what = why;
    return t;
  };
  switch (node.type) {
    case LayerType::kSHUFFLE: {
      const auto* p = std::get_if<ShuffleParams>(&node.params);
      if (!p || !same(x) || !shuffleIsIdentity(*p, g.tensors[size_t(x)].shape.dims, what))
        return -1;
      // A transpose that only moves dims of 1 here may move larger ones at another corner.
      std::string unused;
      for (const Dims& d : g.tensors[size_t(x)].rangeDims)
        if (!shuffleIsIdentity(*p, d, unused)) return -1;
      return x;
    }
    case LayerType::kREFORMAT: {
      const auto* p = std::get_if<ReformatParams>(&node.params);
      if (!p || !same(x) || p->outputType != g.tensors[size_t(x)].shape.type ||
          p->outputFormat != TensorFormat::kLINEAR)
        return -1;
      what = std::string("it casts to ") + dataTypeName(p->outputType) + ", the type it has";
      return x;
    }
    case LayerType::kELEMENTWISE: {
      const auto* p = std::get_if<ElementwiseParams>(&node.params);
      if (!p || node.inputs.size() != 2) return -1;
      const int32_t a = node.inputs[0], b = node.inputs[1];
      const GraphTensor &ta = g.tensors[size_t(a)], &tb = g.tensors[size_t(b)];
      // The ops with a neutral constant: x op neutral is x, and so is neutral op x when the op
      // commutes.
      struct Neutral {
        ElementwiseOp op;
        double value;
        bool commutes;
        const char* why;
      };
      static constexpr Neutral kNeutrals[] = {
          {ElementwiseOp::kADD, 0, true, "it adds zero"},
          {ElementwiseOp::kSUB, 0, false, "it subtracts zero"},
          {ElementwiseOp::kMUL, 1, true, "it multiplies by one"},
          {ElementwiseOp::kDIV, 1, false, "it divides by one"},
      };
      for (const Neutral& n : kNeutrals) {
        if (n.op != p->op) continue;
        if (same(a) && constantIsAll(tb, n.value)) return passes(a, n.why);
        if (n.commutes && same(b) && constantIsAll(ta, n.value)) return passes(b, n.why);
      }
      return -1;
    }
    case LayerType::kCONCATENATION:
      if (node.inputs.size() != 1 || !same(x)) return -1;
      return passes(x, "it concatenates one tensor");
    case LayerType::kSLICE: {
      const auto* p = std::get_if<SliceParams>(&node.params);
      const Dims& d = g.tensors[size_t(x)].shape.dims;
      if (!p || !same(x) || p->starts.nbDims != d.nbDims || p->steps.nbDims != d.nbDims) return -1;
      for (int32_t i = 0; i < d.nbDims; ++i)
        if (p->starts.d[i] != 0 || p->startFromEnd[i] != 0 || (p->steps.d[i] != 1 && d.d[i] > 1))
          return -1;
      return passes(x, "it slices everything in order");
    }
    case LayerType::kPADDING: {
      const auto* p = std::get_if<PaddingParams>(&node.params);
      if (!p || !same(x) || !allZero(p->before, Dims::kMaxDims) ||
          !allZero(p->after, Dims::kMaxDims))
        return -1;
      return passes(x, "it pads nothing");
    }
    case LayerType::kTILE: {
      const auto* p = std::get_if<TileParams>(&node.params);
      if (!p || !same(x)) return -1;
      for (int32_t i = 0; i < p->repeats.nbDims; ++i)
        if (p->repeats.d[i] != 1) return -1;
      return passes(x, "it repeats once");
    }
    case LayerType::kEXPAND:
      if (!same(x)) return -1;
      return passes(x, "it expands to the shape the tensor has");
    default:
      return -1;
  }
}

}  // namespace

Status eliminateIdentities(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    const GraphNode& node = edit.node(n);
    if (node.type == LayerType::kPLUGIN || node.type == LayerType::kCONSTANT) continue;
    std::string what;
    const int32_t in = passThrough(graph, node, what);
    if (in < 0) continue;
    const int32_t out = node.outputs[0];
    const GraphTensor& input = edit.tensor(in);
    const GraphTensor& output = edit.tensor(out);
    if (!output.isOutput) {
      context.changed("removed " + describe(node) + ": " + what + "; its consumers read '" +
                      input.name + "'");
      edit.redirectConsumers(out, in);
      edit.removeNode(n);
      continue;
    }
    // A network output: the layer making the input takes over the output tensor, if it may.
    const int32_t producer = edit.producer(in);
    if (producer < 0 || input.isInput || isConstant(input) || input.isOutput) {
      context.declined("kept " + describe(node) + ": " + what + ", but its output '" + output.name +
                       "' is a network output and its input '" + input.name + "' is " +
                       (input.isInput    ? "a network input"
                        : input.isOutput ? "another network output"
                                         : "a constant") +
                       ", so a step must write it");
      continue;
    }
    context.changed("removed " + describe(node) + ": " + what + "; " +
                    describe(edit.node(producer)) + " now writes network output '" + output.name +
                    "' directly");
    size_t slot = 0;
    while (edit.node(producer).outputs[slot] != in) ++slot;
    edit.removeNode(n);
    edit.redirectConsumers(in, out);
    edit.setOutput(producer, slot, out);
  }
  return edit.compact();
}

}  // namespace kiln::passes
