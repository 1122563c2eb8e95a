#include "builder/graph_shapes.h"

#include "ops/op_table.h"
#include "plugin/plugin_object.h"

namespace kiln {

Status inferGraphShapes(Graph& graph) {
  std::vector<TensorShape> in, out;
  for (const GraphNode& node : graph.nodes) {
    if (node.type == LayerType::kCONSTANT) continue;
    const auto where = [&] {
      return "layer '" + node.name + "' (" + std::string(layerTypeName(node.type)) + ")";
    };
    in.clear();
    out.clear();
    for (int32_t i : node.inputs) in.push_back(graph.tensors[i].shape);
    if (node.type == LayerType::kPLUGIN) {
      std::vector<Dims> dims;
      for (const TensorShape& s : in) dims.push_back(s.dims);
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        TensorShape shape = graph.tensors[node.outputs[o]].shape;
        KILN_RETURN_IF_ERROR(
            node.plugin->getOutputDimensions(static_cast<int32_t>(o), dims, shape.dims)
                .withContext(where()));
        out.push_back(shape);
      }
    } else {
      KILN_RETURN_IF_ERROR(inferLayerOutputs(node.type, node.params, in, out).withContext(where()));
    }
    if (out.size() != node.outputs.size())
      return internalError(where() + ": its output count changed with the input shapes");
    for (size_t o = 0; o < out.size(); ++o) graph.tensors[node.outputs[o]].shape = out[o];
  }
  return Status::ok();
}

Status specializeGraph(Graph& graph, const std::map<std::string, Dims>& inputDims,
                       const std::string& where) {
  for (const auto& [name, dims] : inputDims) {
    GraphTensor* input = nullptr;
    for (int32_t i : graph.inputs)
      if (graph.tensors[i].name == name) input = &graph.tensors[i];
    if (!input) return invalidArgument(where + ": the network has no input '" + name + "'");
    const Dims& declared = input->declared;
    if (dims.nbDims != declared.nbDims)
      return invalidArgument(where + ": input '" + name + "' is given " + dimsStringTimes(dims) +
                             ", of rank " + std::to_string(dims.nbDims) + "; the input has rank " +
                             std::to_string(declared.nbDims));
    for (int32_t k = 0; k < dims.nbDims; ++k) {
      if (dims.d[k] < 0)
        return invalidArgument(where + ": input '" + name + "' axis " + std::to_string(k) +
                               " is given the negative value " + std::to_string(dims.d[k]));
      if (declared.d[k] >= 0 && declared.d[k] != dims.d[k])
        return invalidArgument(where + ": input '" + name + "' axis " + std::to_string(k) +
                               " is fixed at " + std::to_string(declared.d[k]) + " but is given " +
                               std::to_string(dims.d[k]));
    }
    input->shape.dims = dims;
  }
  return inferGraphShapes(graph).withContext(where);
}

bool hasDynamicInputs(const Graph& graph) {
  for (int32_t i : graph.inputs)
    if (hasDynamicDim(graph.tensors[i].declared)) return true;
  return false;
}

}  // namespace kiln
