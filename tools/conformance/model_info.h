// What the conformance runner needs to know about an ONNX model before handing it to the parser:
// the op types of its nodes (to decide whether kiln claims it) and its graph inputs and outputs
// (to bind test_data_set_*/input_N.pb and output_N.pb by position). Read with the protobuf classes
// of Debian's libonnx, independently of kiln's parser, so a parser bug cannot hide a test.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kiln::conformance {

struct ModelIo {
  std::string name;
  int32_t elemType = 0;  // onnx::TensorProto::DataType
  // For graph inputs: every (op, input slot) that reads it, ops named as in nodeOps.
  std::vector<std::pair<std::string, int>> consumers;
};

struct ModelInfo {
  // "Op" for the default domain, "domain:Op" otherwise, one entry per node (with repeats).
  std::vector<std::string> nodeOps;
  std::vector<ModelIo> inputs;  // graph inputs that are not initializers, in graph order
  std::vector<ModelIo> outputs;
  int64_t opset = 0;  // of the default domain
};

// False with `error` set when the file cannot be read or is not a ModelProto.
bool loadModelInfo(const std::string& path, ModelInfo& info, std::string& error);

// A copy of the model at `modelPath` in which each graph input named in `frozen` (name -> path of
// a TensorProto .pb) has become an initializer holding that tensor. False with `error` set.
bool freezeInputs(const std::string& modelPath,
                  const std::vector<std::pair<std::string, std::string>>& frozen,
                  std::string& modelBytes, std::string& error);

// True for the element types kiln's DataType can represent (float, float16, bfloat16, int8,
// int32, int64, bool).
bool isKilnElemType(int32_t elemType);
// "float", "double", ... for messages.
std::string elemTypeName(int32_t elemType);

}  // namespace kiln::conformance
