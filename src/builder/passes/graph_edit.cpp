#include "builder/passes/graph_edit.h"

#include <algorithm>

#include "ops/elementwise/elementwise_semantics.h"

namespace kiln::passes {

std::string describe(const GraphNode& node) {
  std::string s = "'" + node.name + "' (" + layerTypeName(node.type);
  if (const auto* p = std::get_if<ElementwiseParams>(&node.params);
      p && node.type == LayerType::kELEMENTWISE) {
    s += std::string(" ") + ops::elementwise::opName(p->op);
  }
  return s + ")";
}

GraphEditor::GraphEditor(Graph& graph)
    : graph_(graph), removed_(graph.nodes.size(), false), consumers_(graph.tensors.size()) {
  for (int32_t n = 0; n < nodeCount(); ++n) {
    for (int32_t t : graph_.nodes[size_t(n)].inputs) consumers_[size_t(t)].push_back(n);
  }
  for (const GraphTensor& t : graph_.tensors) names_.insert(t.name);
}

int32_t GraphEditor::producer(int32_t t) const {
  const int32_t p = tensor(t).producer;
  return p >= 0 && !removed(p) ? p : -1;
}

void GraphEditor::unlink(int32_t t, int32_t n) {
  auto& c = consumers_[size_t(t)];
  auto it = std::find(c.begin(), c.end(), n);
  if (it != c.end()) c.erase(it);
}

void GraphEditor::redirectConsumers(int32_t from, int32_t to) {
  if (from == to) return;
  const std::vector<int32_t> readers = consumers_[size_t(from)];
  for (int32_t n : readers) {
    for (int32_t& i : graph_.nodes[size_t(n)].inputs) {
      if (i == from) i = to;
    }
  }
  // Each slot moved once, so the lists move as they are (duplicates included).
  auto& dst = consumers_[size_t(to)];
  dst.insert(dst.end(), readers.begin(), readers.end());
  consumers_[size_t(from)].clear();
}

void GraphEditor::setInput(int32_t n, size_t slot, int32_t t) {
  int32_t& i = graph_.nodes[size_t(n)].inputs[slot];
  if (i == t) return;
  unlink(i, n);
  i = t;
  consumers_[size_t(t)].push_back(n);
}

void GraphEditor::appendInput(int32_t n, int32_t t) {
  graph_.nodes[size_t(n)].inputs.push_back(t);
  consumers_[size_t(t)].push_back(n);
}

void GraphEditor::setOutput(int32_t n, size_t slot, int32_t t) {
  int32_t& o = graph_.nodes[size_t(n)].outputs[slot];
  if (graph_.tensors[size_t(o)].producer == n) graph_.tensors[size_t(o)].producer = -1;
  o = t;
  graph_.tensors[size_t(t)].producer = n;
}

void GraphEditor::replaceLayer(int32_t n, LayerType type, LayerParams params,
                               std::vector<int32_t> inputs) {
  GraphNode& node = graph_.nodes[size_t(n)];
  for (int32_t t : node.inputs) unlink(t, n);
  node.type = type;
  node.params = std::move(params);
  node.inputs = std::move(inputs);
  for (int32_t t : node.inputs) consumers_[size_t(t)].push_back(n);
}

void GraphEditor::removeNode(int32_t n) {
  if (removed_[size_t(n)]) return;
  GraphNode& node = graph_.nodes[size_t(n)];
  for (int32_t t : node.inputs) unlink(t, n);
  for (int32_t t : node.outputs) {
    if (graph_.tensors[size_t(t)].producer == n) graph_.tensors[size_t(t)].producer = -1;
  }
  removed_[size_t(n)] = true;
}

void GraphEditor::makeConstant(int32_t n,
                               std::vector<std::shared_ptr<const std::vector<uint8_t>>> values) {
  GraphNode& node = graph_.nodes[size_t(n)];
  for (int32_t t : node.inputs) unlink(t, n);
  node.inputs.clear();
  node.type = LayerType::kCONSTANT;
  node.params = std::monostate{};
  for (size_t o = 0; o < node.outputs.size() && o < values.size(); ++o) {
    graph_.tensors[size_t(node.outputs[o])].constant = std::move(values[o]);
  }
}

int32_t GraphEditor::addConstant(const std::string& base, const TensorShape& shape,
                                 std::shared_ptr<const std::vector<uint8_t>> bytes) {
  const int32_t t = addActivation(base, shape);
  graph_.tensors[size_t(t)].constant = std::move(bytes);
  return t;
}

int32_t GraphEditor::addActivation(const std::string& base, const TensorShape& shape) {
  std::string name = base;
  for (int i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
  names_.insert(name);
  GraphTensor t;
  t.name = name;
  t.shape = shape;
  graph_.tensors.push_back(std::move(t));
  consumers_.emplace_back();
  return static_cast<int32_t>(graph_.tensors.size()) - 1;
}

Status GraphEditor::compact(bool dropUnreadConstants, std::vector<std::string>* droppedConstants) {
  const size_t nbTensors = graph_.tensors.size();
  std::vector<bool> referenced(nbTensors, false);
  for (int32_t n = 0; n < nodeCount(); ++n) {
    if (removed(n)) continue;
    for (int32_t t : graph_.nodes[size_t(n)].inputs) referenced[size_t(t)] = true;
    for (int32_t t : graph_.nodes[size_t(n)].outputs) referenced[size_t(t)] = true;
  }

  // The invariants, before anything is renumbered: a broken one is a pass's bug.
  std::vector<bool> made(nbTensors, false);
  for (size_t t = 0; t < nbTensors; ++t) {
    made[t] = graph_.tensors[t].isInput ||
              (isConstant(graph_.tensors[t]) && graph_.tensors[t].producer < 0);
  }
  for (int32_t n = 0; n < nodeCount(); ++n) {
    if (removed(n)) continue;
    const GraphNode& node = graph_.nodes[size_t(n)];
    for (int32_t t : node.inputs) {
      if (!made[size_t(t)])
        return internalError("graph pass left layer '" + node.name + "' reading tensor '" +
                             tensor(t).name + "' before (or without) its producer");
    }
    for (int32_t t : node.outputs) {
      if (tensor(t).producer != n)
        return internalError("graph pass left tensor '" + tensor(t).name +
                             "' with a wrong producer (layer '" + node.name + "')");
      made[size_t(t)] = true;
    }
  }
  for (int32_t o : graph_.outputs) {
    if (producer(o) < 0)
      return internalError("graph pass left network output '" + tensor(o).name +
                           "' without a producing layer");
  }

  std::vector<int32_t> tensorMap(nbTensors, -1), nodeMap(graph_.nodes.size(), -1);
  std::vector<GraphTensor> tensors;
  for (size_t t = 0; t < nbTensors; ++t) {
    GraphTensor& g = graph_.tensors[t];
    bool keep = referenced[t] || g.isInput || g.isOutput;
    if (!keep && isConstant(g) && !dropUnreadConstants) keep = true;
    if (!keep) {
      if (isConstant(g) && droppedConstants) droppedConstants->push_back(g.name);
      continue;
    }
    tensorMap[t] = static_cast<int32_t>(tensors.size());
    tensors.push_back(std::move(g));
  }
  std::vector<GraphNode> nodes;
  for (int32_t n = 0; n < nodeCount(); ++n) {
    if (removed(n)) continue;
    nodeMap[size_t(n)] = static_cast<int32_t>(nodes.size());
    // Moved, not copied: a plugin node's definition object keeps its one owner here.
    nodes.push_back(std::move(graph_.nodes[size_t(n)]));
  }
  for (GraphTensor& t : tensors) t.producer = t.producer >= 0 ? nodeMap[size_t(t.producer)] : -1;
  for (GraphNode& node : nodes) {
    for (int32_t& t : node.inputs) t = tensorMap[size_t(t)];
    for (int32_t& t : node.outputs) t = tensorMap[size_t(t)];
  }
  for (int32_t& t : graph_.inputs) t = tensorMap[size_t(t)];
  for (int32_t& t : graph_.outputs) t = tensorMap[size_t(t)];
  graph_.tensors = std::move(tensors);
  graph_.nodes = std::move(nodes);
  removed_.assign(graph_.nodes.size(), false);
  consumers_.clear();
  return Status::ok();
}

}  // namespace kiln::passes
