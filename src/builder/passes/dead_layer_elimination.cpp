// Dead-layer elimination: layers (plugins included) and constants that no network output needs
// are removed, so the plan neither computes nor stores them. Network inputs stay even when
// nothing reads them: they are part of the engine's bindings.
#include <unordered_set>

#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"

namespace kiln::passes {

Status eliminateDeadLayers(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  std::vector<bool> needed(graph.tensors.size(), false);
  std::unordered_set<std::string> reported;  // constants already named with their layer
  for (int32_t o : graph.outputs) needed[size_t(o)] = true;
  // Nodes are in topological order: walking back, a node's readers are decided before it.
  for (int32_t n = edit.nodeCount() - 1; n >= 0; --n) {
    const GraphNode& node = edit.node(n);
    bool live = false;
    for (int32_t o : node.outputs) live = live || needed[size_t(o)];
    if (live) {
      for (int32_t i : node.inputs) needed[size_t(i)] = true;
      continue;
    }
    if (node.type == LayerType::kCONSTANT) {
      std::string names;
      for (int32_t o : node.outputs) {
        names += (names.empty() ? "'" : ", '") + edit.tensor(o).name + "'";
        reported.insert(edit.tensor(o).name);
      }
      context.changed("removed constant layer '" + node.name + "': nothing reads " + names);
    } else {
      context.changed("removed " + describe(node) + ": no network output needs it");
    }
    edit.removeNode(n);
  }
  std::vector<std::string> dropped;
  KILN_RETURN_IF_ERROR(edit.compact(/*dropUnreadConstants=*/true, &dropped));
  for (const std::string& name : dropped) {
    if (reported.count(name)) continue;
    context.changed("dropped constant '" + name + "': nothing reads it");
  }
  return Status::ok();
}

}  // namespace kiln::passes
