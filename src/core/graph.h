// The graph IR shared by the network API, the builder and the plan: tensors and nodes by index.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kiln/layers.h"
#include "kiln/types.h"

namespace kiln {

// A layer's parameters; the alternative matches the LayerType (monostate for constants and
// plugins, whose data lives elsewhere).
using LayerParams =
    std::variant<std::monostate, ConvolutionParams, PoolingParams, ElementwiseParams,
                 ActivationParams, MatrixMultiplyParams, GemmParams, SoftmaxParams,
                 ConcatenationParams, ShuffleParams, ReduceParams, ReformatParams, SelectParams,
                 GatherParams, SliceParams, PaddingParams, ResizeParams, TileParams, ExpandParams,
                 DeconvolutionParams, NormalizationParams, LrnParams, RoiAlignParams>;

// Shape and element type of a tensor, as shape inference sees it.
struct TensorShape {
  Dims dims;
  DataType type = DataType::kFLOAT;
};

struct GraphTensor {
  std::string name;
  TensorShape shape;
  bool isInput = false;
  bool isOutput = false;
  int32_t producer = -1;  // node index, -1 for inputs and constants
  // Non-null for constants (weights): the bytes in `shape.type`, linear format.
  std::shared_ptr<const std::vector<uint8_t>> constant;
};

class PluginObject;  // src/plugin/plugin_object.h

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
