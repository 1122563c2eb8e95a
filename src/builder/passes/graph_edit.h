// The one place where passes change a graph's structure. A Graph's nodes are a topologically
// ordered vector that refer to tensors by index, so deleting in place would shift every index
// after it; instead an editor marks nodes removed and rewires tensors while keeping every index
// valid, and compact() renumbers once at the end.
//
// Invariants an edit keeps (compact() checks them and reports a broken one as an internal
// error): a live node only reads network inputs, constants, or outputs of earlier live nodes;
// every network output is produced by a live node. Plugin nodes keep their definition object
// (the shared_ptr is moved, never cloned or reset, so the network's D stays the one object).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "builder/graph.h"
#include "kiln/status.h"

namespace kiln::passes {

class GraphEditor {
 public:
  explicit GraphEditor(Graph& graph);

  Graph& graph() { return graph_; }
  const GraphTensor& tensor(int32_t t) const { return graph_.tensors[size_t(t)]; }
  const GraphNode& node(int32_t n) const { return graph_.nodes[size_t(n)]; }
  int32_t nodeCount() const { return static_cast<int32_t>(graph_.nodes.size()); }
  bool removed(int32_t n) const { return removed_[size_t(n)]; }

  // Live nodes reading tensor t, once per input slot (a node reading t twice is listed twice).
  const std::vector<int32_t>& consumers(int32_t t) const { return consumers_[size_t(t)]; }
  // The live node producing t, or -1 (network inputs, constants without a constant layer).
  int32_t producer(int32_t t) const;

  // Every live reader of `from` reads `to` instead.
  void redirectConsumers(int32_t from, int32_t to);
  // Input slot `slot` of node n reads tensor t.
  void setInput(int32_t n, size_t slot, int32_t t);
  // Node n also reads tensor t, as a new last input.
  void appendInput(int32_t n, int32_t t);
  // Node n produces tensor t at output `slot` (its previous output there loses its producer;
  // t must not be produced by any other live node).
  void setOutput(int32_t n, size_t slot, int32_t t);
  // Node n becomes a layer of `type` with `params` reading `inputs`; its outputs stay (a fusion
  // turns the last layer of a chain into the fused one).
  void replaceLayer(int32_t n, LayerType type, LayerParams params, std::vector<int32_t> inputs);
  // The node stops reading its inputs and is dropped at compact().
  void removeNode(int32_t n);
  // Node n becomes a constant layer whose outputs hold `values` (one per output, in the output
  // tensors' shapes and types): it reads nothing any more.
  void makeConstant(int32_t n, std::vector<std::shared_ptr<const std::vector<uint8_t>>> values);
  // A new constant tensor (no layer produces it, like a convolution's weights), named after
  // `base` but unique in the graph.
  int32_t addConstant(const std::string& base, const TensorShape& shape,
                      std::shared_ptr<const std::vector<uint8_t>> bytes);
  // A new computed tensor of `shape`, named after `base` but unique; setOutput gives it its
  // producer.
  int32_t addActivation(const std::string& base, const TensorShape& shape);
  // Node n is called `name` (a layer that moves keeps the name it had in the network).
  void rename(int32_t n, std::string name) { graph_.nodes[size_t(n)].name = std::move(name); }

  // Drops removed nodes and the tensors no live node reads or produces any more, keeping network
  // inputs and outputs, and renumbers everything. Constants nothing reads are dropped only when
  // `dropUnreadConstants` is set (dead-layer elimination does, and lists their names in
  // `droppedConstants`); other passes leave them for it. The editor is spent afterwards.
  Status compact(bool dropUnreadConstants = false,
                 std::vector<std::string>* droppedConstants = nullptr);

 private:
  void unlink(int32_t t, int32_t n);

  Graph& graph_;
  std::vector<bool> removed_;
  std::vector<std::vector<int32_t>> consumers_;
  std::unordered_set<std::string> names_;
};

// Whether tensor t is a constant with known bytes.
inline bool isConstant(const GraphTensor& t) { return t.constant != nullptr; }

// "'name' (Convolution)" for messages.
std::string describe(const GraphNode& node);

}  // namespace kiln::passes
