// The graph IR of a network as the network API builds it and the builder's passes rewrite it:
// tensors and nodes by index, nodes in topological order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/layer_params.h"
#include "core/tensor_shape.h"
#include "kiln/layers.h"
#include "kiln/types.h"

namespace kiln {

class PluginObject;  // plugin/plugin_object.h

struct GraphTensor {
  std::string name;
  // The shape layers were inferred at. For a network input with dynamic (-1) dims, its working
  // shape (NetworkImpl::setWorkingShape) or, in the builder, one corner of a profile.
  TensorShape shape;
  // Network inputs: the dims as declared, -1 where dynamic, and each dim's name ("" if none).
  Dims declared;
  std::vector<std::string> dimNames;
  // Shape-value inputs (ITensor::setShapeValues): the values the network is built for.
  std::vector<int64_t> shapeValues;
  bool isShapeValue = false;
  bool isInput = false;
  bool isOutput = false;
  int32_t producer = -1;  // node index, -1 for inputs and constants
  // Non-null for constants (weights): the bytes in `shape.type`, linear format.
  std::shared_ptr<const std::vector<uint8_t>> constant;
  // Profile builds: the tensor's dims at every corner of every profile, as the network is before
  // any pass (empty in static builds and for tensors passes add). A pass that would rewrite a
  // layer because of its dims at one corner (a transpose that only moves dims of 1) checks them
  // at all, so that every corner's graph stays one list of steps.
  std::vector<Dims> rangeDims;
};

struct GraphNode {
  LayerType type = LayerType::kCONSTANT;
  std::string name;
  LayerParams params;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  // Plugin layers: the definition object (D), owned by the network.
  std::shared_ptr<PluginObject> plugin;
};

struct Graph {
  std::vector<GraphTensor> tensors;
  std::vector<GraphNode> nodes;  // topologically ordered (a node only reads earlier tensors)
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

}  // namespace kiln
