// What the fusion passes share (gelu_fusion.cpp, layer_norm_fusion.cpp): matching a chain of
// layers that ends at one node, and replacing the chain by one layer once its intermediates are
// known to feed the chain alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "builder/passes/constant_values.h"
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"

namespace kiln::passes {

// Whether node n is an elementwise `op` of two inputs.
inline bool isElementwise(const GraphEditor& edit, int32_t n, ElementwiseOp op) {
  const GraphNode& node = edit.node(n);
  if (node.type != LayerType::kELEMENTWISE || node.inputs.size() != 2) return false;
  const auto* p = std::get_if<ElementwiseParams>(&node.params);
  return p && p->op == op;
}

// The live producer of tensor t when it is an elementwise `op` of two inputs, else -1.
inline int32_t elementwiseProducer(const GraphEditor& edit, int32_t t, ElementwiseOp op) {
  const int32_t n = edit.producer(t);
  return n >= 0 && isElementwise(edit, n, op) ? n : -1;
}

// For a two-input node whose inputs are one constant and one computed tensor: the computed one,
// with the constant in *constant; else -1.
inline int32_t nonConstantInput(const GraphEditor& edit, int32_t n, int32_t* constant) {
  const auto& in = edit.node(n).inputs;
  for (size_t side = 0; side < 2; ++side) {
    if (isConstant(edit.tensor(in[side])) && !isConstant(edit.tensor(in[1 - side]))) {
      *constant = in[side];
      return in[1 - side];
    }
  }
  return -1;
}

// Whether tensor t is a one-element constant within FP32 rounding of `value`.
inline bool scalarNear(const GraphTensor& t, double value) {
  if (!isConstant(t) || volume(t.shape.dims) != 1) return false;
  return std::fabs(constantValue(t, 0) - value) <= 1e-6 * std::fabs(value);
}

// A chain found ending at a node: the layers before it (which go), and the one layer the last
// node becomes.
struct ChainFusion {
  std::vector<int32_t> chain;
  // Chain nodes whose output the chain reads more than once, with how many reads (a layer that
  // takes a tensor twice counts twice); every other chain node's output is read once.
  std::map<int32_t, size_t> reads;
  std::string what;  // "the GELU written out as 5 layers ending in ..."
  std::string into;  // "one GELU of 'x'"
  LayerType type = LayerType::kCONSTANT;
  LayerParams params;
  std::vector<int32_t> inputs;
};

// Calls match(n, fusion) on every live node in order; where it finds a chain whose intermediates
// feed the chain alone (and are not network outputs), the chain goes and its last node becomes
// the fused layer. match may decline a candidate itself, in the context, and return false; it may
// add constants through the editor (a scale of ones, say).
template <class Match>
Status fuseChains(Graph& graph, PassContext& context, Match&& match) {
  GraphEditor edit(graph);
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    ChainFusion f;
    if (edit.removed(n) || !match(edit, n, f)) continue;
    std::string shared;
    for (int32_t c : f.chain) {
      const int32_t t = edit.node(c).outputs[0];
      const auto it = f.reads.find(c);
      const size_t expected = it == f.reads.end() ? 1u : it->second;
      if (edit.tensor(t).isOutput || edit.consumers(t).size() != expected)
        shared = edit.tensor(t).name;
    }
    if (!shared.empty()) {
      context.declined("left " + f.what + " alone: its intermediate '" + shared +
                       "' is read elsewhere too");
      continue;
    }
    context.changed("fused " + f.what + " into " + f.into);
    for (int32_t c : f.chain) edit.removeNode(c);
    edit.replaceLayer(n, f.type, std::move(f.params), std::move(f.inputs));
  }
  return edit.compact();
}

}  // namespace kiln::passes
