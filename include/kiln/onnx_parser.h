// The ONNX parser (libkiln_onnx): reads an ONNX model (opsets 7 to 21) into a network definition.
//
// Inputs with symbolic dims are built for the shapes OnnxParserOptions gives, or kept dynamic
// over the ranges of its optimization profiles. Every node becomes kiln layers through the network
// API; shape arithmetic on constants (Shape, Gather, Concat, Unsqueeze, Slice, Cast, ... on
// constant inputs) is folded while parsing. An op type that kiln does not implement is looked up in
// PluginRegistry::global() by op type (attributes plugin_version, default "1", and
// plugin_namespace, default ""); the node's other attributes become plugin fields with their
// types kept. Errors name the node: "node 12 'crop' (CropAndResize): plugin not registered ...".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/builder.h"
#include "kiln/network.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

// How to read a model whose graph inputs have symbolic dims (ONNX dim_param, as
// torch.onnx.export(..., dynamic_axes=...) writes them) or unknown ones. Give one of the two
// fields (both is an error); with neither, such a model is refused with a message that says so.
struct OnnxParserOptions {
  // The shape to build for, per graph input: its rank must be the model's, dims the model fixes
  // must be given as they are, and dims sharing one dim_param name must be given equal values
  // (across inputs too). Everything after the inputs is then static, shape arithmetic included,
  // as when onnxruntime runs a model at the shapes it is given.
  std::map<std::string, Dims> inputShapes;
  // Optimization profiles (DESIGN.md section 7), passed on to BuilderConfig::profiles: each must
  // give min, opt and max for every graph input with a symbolic or unknown dim, of the model's
  // rank, with its fixed dims as they are; naming a non-input is an error, and so is a model
  // without dynamic inputs. The network's inputs are then dynamic: -1 at each symbolic or
  // unknown dim, named after its dim_param (ITensor::getDimensionName), at working shape profile
  // 0's opt. The model is first parsed statically at every corner (each profile's min, opt and
  // max), and the network is made to give every layer the shape it has there: a reshape target
  // dim (Reshape, Flatten, Squeeze, Unsqueeze) that changes between the corners becomes 0 (copy
  // the input's) or the one -1 (inferred), an Expand dim the input's; any other value that
  // depends on the input shapes (a second such reshape dim, a Slice's bounds or output dims, a
  // Resize's output dims, a Range, a ConstantOfShape or other folded constant reaching the
  // network, ...) is refused naming the node and its values at the corners, since kiln cannot yet
  // carry shape arithmetic to run time. Last, the network is re-inferred at every corner and must
  // give every layer output the dims the static parse there gives.
  std::vector<OptimizationProfile> profiles;
  // Values of INT32/INT64 graph inputs with fixed dims that a node reads as a shape operand
  // (onnxConstantInputs: a Reshape's shape, a Slice's bounds, Expand's or ConstantOfShape's
  // shape, ...), in row-major order: such an input becomes a shape-value input built for these
  // values (ITensor::setShapeValues), which the engine checks at run time; it stays an input of
  // the engine. Values given for an input that no node reads as a shape operand are ignored (so
  // a runner may pass every integer input's), and a name that is no graph input is an error.
  std::map<std::string, std::vector<int64_t>> shapeValues;
};

Status parseOnnxFile(const std::string& path, INetworkDefinition& network,
                     const OnnxParserOptions& options = {});
// `name` is used in error messages only.
Status parseOnnxBytes(const void* data, size_t size, const std::string& name,
                      INetworkDefinition& network, const OnnxParserOptions& options = {});

// A serialized ONNX TensorProto (.pb), as the ONNX test data stores inputs and outputs.
struct OnnxTensor {
  std::string name;
  DataType type = DataType::kFLOAT;
  Dims dims;
  std::vector<uint8_t> data;  // little-endian elements of `type`, row-major
};
// Reads raw_data or the typed fields; external data is refused.
Status readOnnxTensorFile(const std::string& path, OnnxTensor& tensor);

// The op types the parser imports itself (anything else goes to the plugin registry).
const std::vector<std::string>& onnxSupportedOps();
// The inputs of an op type that must be constants (initializers or Constant outputs, or values
// folded from them and from shapes) when the model is parsed: weights and shape operands. Empty
// for ops without any and for op types the parser does not import.
const std::vector<int32_t>& onnxConstantInputs(const std::string& opType);

}  // namespace kiln
