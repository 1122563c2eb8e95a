#include "conformance/model_info.h"

#include <fstream>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

namespace kiln::conformance {

namespace {

template <typename Message>
bool readProto(const std::string& path, Message& message, const char* what, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path;
    return false;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (!message.ParseFromString(bytes.str())) {
    error = path + " is not an ONNX " + what;
    return false;
  }
  return true;
}

std::string opName(const onnx::NodeProto& node) {
  const std::string& domain = node.domain();
  return domain.empty() || domain == "ai.onnx" ? node.op_type() : domain + ":" + node.op_type();
}

}  // namespace

bool loadModelInfo(const std::string& path, ModelInfo& info, std::string& error) {
  onnx::ModelProto model;
  if (!readProto(path, model, "ModelProto", error)) return false;
  info = ModelInfo();
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") info.opset = op.version();
  }
  const onnx::GraphProto& graph = model.graph();
  for (const auto& node : graph.node()) info.nodeOps.push_back(opName(node));
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  auto ioOf = [](const onnx::ValueInfoProto& value) {
    ModelIo io;
    io.name = value.name();
    if (value.type().has_tensor_type()) io.elemType = value.type().tensor_type().elem_type();
    return io;
  };
  for (const auto& value : graph.input()) {
    if (initializers.count(value.name())) continue;
    ModelIo io = ioOf(value);
    for (const auto& node : graph.node()) {
      for (int slot = 0; slot < node.input_size(); ++slot) {
        if (node.input(slot) == io.name) io.consumers.emplace_back(opName(node), slot);
      }
    }
    info.inputs.push_back(std::move(io));
  }
  for (const auto& value : graph.output()) info.outputs.push_back(ioOf(value));
  return true;
}

bool freezeInputs(const std::string& modelPath,
                  const std::vector<std::pair<std::string, std::string>>& frozen,
                  std::string& modelBytes, std::string& error) {
  onnx::ModelProto model;
  if (!readProto(modelPath, model, "ModelProto", error)) return false;
  onnx::GraphProto* graph = model.mutable_graph();
  for (const auto& [name, pbPath] : frozen) {
    onnx::TensorProto tensor;
    if (!readProto(pbPath, tensor, "TensorProto", error)) return false;
    tensor.set_name(name);
    *graph->add_initializer() = std::move(tensor);
    auto* inputs = graph->mutable_input();
    for (int i = 0; i < inputs->size(); ++i) {
      if (inputs->Get(i).name() == name) {
        inputs->DeleteSubrange(i, 1);
        break;
      }
    }
  }
  // IR 3 wanted every initializer listed as a graph input; from IR 4 a listed one is overridable.
  if (model.ir_version() < 4) model.set_ir_version(4);
  if (!model.SerializeToString(&modelBytes)) {
    error = "cannot serialize the frozen model";
    return false;
  }
  return true;
}

bool isKilnElemType(int32_t elemType) {
  switch (elemType) {
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

std::string elemTypeName(int32_t elemType) {
  if (elemType == 0) return "non-tensor";
  if (!onnx::TensorProto::DataType_IsValid(elemType)) return "type " + std::to_string(elemType);
  std::string name =
      onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elemType));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace kiln::conformance
