// The ONNX parser (libkiln_onnx): reads an ONNX model (opsets 7 to 21) into a network definition.
//
// Inputs with symbolic dims are built for the shapes OnnxParserOptions gives.
// Every node becomes kiln layers through the network API; shape arithmetic on constants (Shape,
// Gather, Concat, Unsqueeze, Slice, Cast, ... on constant inputs) is folded while parsing, so
// only static shapes reach the network. An op type that kiln does not implement is looked up in
// PluginRegistry::global() by op type (attributes plugin_version, default "1", and
// plugin_namespace, default ""); the node's other attributes become plugin fields with their
// types kept. Errors name the node: "node 12 'crop' (CropAndResize): plugin not registered ...".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/network.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

// How to read a model whose graph inputs have symbolic dims (ONNX dim_param, as
// torch.onnx.export(..., dynamic_axes=...) writes them) or unknown ones.
struct OnnxParserOptions {
  // The shape to build for, per graph input: its rank must be the model's, dims the model fixes
  // must be given as they are, and dims sharing one dim_param name must be given equal values
  // (across inputs too). Everything after the inputs is then static, shape arithmetic included,
  // as when onnxruntime runs a model at the shapes it is given. An input with symbolic dims and
  // no entry here is refused with a message that says so. (Optimization profiles, one plan for a
  // range of shapes, are DESIGN.md §7's dynamic shapes: not yet built.)
  std::map<std::string, Dims> inputShapes;
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
// The inputs of an op type that must be constants (initializers or Constant outputs) when the
// model is parsed: weights and shape operands, since kiln's shapes are static. Empty for ops
// without any and for op types the parser does not import.
const std::vector<int32_t>& onnxConstantInputs(const std::string& opType);

}  // namespace kiln
