// Plugin fallback: a node kiln does not implement becomes a plugin layer found in the registry by
// op type; its attributes become plugin fields with their types kept (int64 stays int64).
#include <deque>

#include "kiln/registry.h"
#include "onnx/import_context.h"

namespace kiln::onnx_import {

Status importPluginNode(NodeContext& n) {
  const onnx::NodeProto& node = n.node;
  std::string version = "1", ns;
  // Field storage that must outlive addPlugin (deque: stable addresses as it grows).
  std::deque<std::vector<int64_t>> ints;
  std::deque<std::vector<float>> floats;
  std::deque<std::string> strings;
  std::vector<PluginField> fields;
  for (const auto& a : node.attribute()) {
    if (a.name() == "plugin_version" || a.name() == "plugin_namespace") {
      if (a.type() != onnx::AttributeProto::STRING)
        return n.error("attribute '" + a.name() + "' must be a STRING");
      (a.name() == "plugin_version" ? version : ns) = a.s();
      continue;
    }
    PluginField f;
    strings.push_back(a.name());
    f.name = strings.back().c_str();
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        ints.push_back({a.i()});
        f.type = PluginFieldType::kINT64;
        f.data = ints.back().data();
        f.length = 1;
        break;
      case onnx::AttributeProto::INTS:
        ints.emplace_back(a.ints().begin(), a.ints().end());
        f.type = PluginFieldType::kINT64;
        f.data = ints.back().data();
        f.length = int32_t(ints.back().size());
        break;
      case onnx::AttributeProto::FLOAT:
        floats.push_back({a.f()});
        f.type = PluginFieldType::kFLOAT32;
        f.data = floats.back().data();
        f.length = 1;
        break;
      case onnx::AttributeProto::FLOATS:
        floats.emplace_back(a.floats().begin(), a.floats().end());
        f.type = PluginFieldType::kFLOAT32;
        f.data = floats.back().data();
        f.length = int32_t(floats.back().size());
        break;
      case onnx::AttributeProto::STRING:
        strings.push_back(a.s());
        f.type = PluginFieldType::kSTRING;
        f.data = strings.back().data();
        f.length = int32_t(strings.back().size());
        break;
      default:
        return n.unsupportedError("attribute '" + a.name() + "' has type " +
                                  onnx::AttributeProto_AttributeType_Name(a.type()) +
                                  ", which cannot be passed to a plugin");
    }
    fields.push_back(f);
  }
  const std::string opType = node.op_type();
  if (!PluginRegistry::global().getCreator(opType.c_str(), version.c_str(), ns.c_str()))
    return n.error("op type is not built in and no plugin is registered as '" + opType +
                       "' version '" + version + "' namespace '" + ns +
                       "' (plugin not registered: load its library with --plugins)",
                   StatusCode::kNotFound);
  std::vector<ITensor*> inputs;
  for (int32_t i = 0; i < n.nbInputs(); ++i) {
    if (!n.hasInput(i))
      return n.unsupportedError("a plugin node cannot have an empty input " + std::to_string(i));
    ITensor* t = nullptr;
    KILN_RETURN_IF_ERROR(n.tensor(i, t));
    inputs.push_back(t);
  }
  PluginSpec spec;
  spec.name = opType.c_str();
  spec.version = version.c_str();
  spec.pluginNamespace = ns.c_str();
  spec.fields.nbFields = int32_t(fields.size());
  spec.fields.fields = fields.data();
  ILayer* layer = n.net().addPlugin(inputs.data(), int32_t(inputs.size()), spec);
  if (!layer) return n.layerError();
  if (layer->getNbOutputs() < node.output_size())
    return n.error("the plugin has " + std::to_string(layer->getNbOutputs()) +
                   " outputs, the node " + std::to_string(node.output_size()));
  return n.setLayerOutputs(layer);
}

}  // namespace kiln::onnx_import
