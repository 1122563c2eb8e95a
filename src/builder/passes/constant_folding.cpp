// Constant folding: a built-in layer whose inputs are all constants is computed once, here, on
// the CPU backend (constant_eval.h), and its outputs become constants.
//
// Left alone, with the reason in the verbose log:
//  - a layer writing a network output: the plan must have a step that computes it;
//  - a result over PassLimits (2^26 elements or 256 MiB): kept as a step rather than stored in
//    the plan (a small model can ask for any size, e.g. an Expand of a scalar);
//  - a layer no CPU tactic takes (say, fp16 arithmetic, which the CPU computes in fp32 after a
//    conversion that only lowering inserts), or whose kernel reports an error on these values
//    (an index out of range): the plan computes it, and reports it, at run time.
// Plugins are never evaluated here: their code runs only through the lifecycle the engine traces.
#include "builder/passes/constant_eval.h"
#include "builder/passes/graph_edit.h"
#include "builder/passes/pass.h"
#include "core/plan.h"
#include "core/tensor_shape.h"

namespace kiln::passes {

Status foldConstants(Graph& graph, PassContext& context) {
  GraphEditor edit(graph);
  const PassLimits& limits = context.limits();
  for (int32_t n = 0; n < edit.nodeCount(); ++n) {
    const GraphNode& node = edit.node(n);
    if (node.type == LayerType::kPLUGIN || node.type == LayerType::kCONSTANT) continue;
    if (node.inputs.empty()) continue;
    bool allConstant = true;
    for (int32_t t : node.inputs) allConstant = allConstant && isConstant(edit.tensor(t));
    if (!allConstant) continue;

    const std::string left = "left " + describe(node) + " alone: ";
    std::string why;
    uint64_t bytes = 0;
    for (int32_t t : node.outputs) {
      const GraphTensor& o = edit.tensor(t);
      const int64_t elements = volume(o.shape.dims);
      if (o.isOutput) {
        why = "its output '" + o.name + "' is a network output, which the plan must compute";
      } else if (elements < 0 || elements > limits.maxFoldElements) {
        why = "its output '" + o.name + "' " + dimsString(o.shape.dims) + " has more than " +
              std::to_string(limits.maxFoldElements) + " elements";
      }
      if (!why.empty()) break;
      bytes += uint64_t(plan::tensorBytes(o.shape.dims, o.shape.type));
    }
    if (why.empty() && bytes > limits.maxFoldBytes) {
      why = "its outputs would take " + std::to_string(bytes) + " bytes, more than " +
            std::to_string(limits.maxFoldBytes);
    }
    if (!why.empty()) {
      context.declined(left + why);
      continue;
    }

    std::vector<HostTensor> inputs, outputs;
    for (int32_t t : node.inputs) inputs.push_back({edit.tensor(t).shape, edit.tensor(t).constant});
    for (int32_t t : node.outputs) outputs.push_back({edit.tensor(t).shape, nullptr});
    Status s = evaluateOnCpu(node, inputs, outputs);
    if (!s) {
      context.declined(left + s.message());
      continue;
    }
    std::string names;
    for (int32_t t : node.outputs) {
      names += (names.empty() ? "'" : ", '") + edit.tensor(t).name + "' " +
               dimsString(edit.tensor(t).shape.dims);
    }
    context.changed("folded " + describe(node) + " into constant " + names);
    std::vector<std::shared_ptr<const std::vector<uint8_t>>> values;
    for (HostTensor& t : outputs) values.push_back(std::move(t.bytes));
    edit.makeConstant(n, std::move(values));
  }
  return edit.compact();
}

}  // namespace kiln::passes
