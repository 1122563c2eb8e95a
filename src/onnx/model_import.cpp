// parseOnnxBytes / parseOnnxFile: the model, its opset, graph inputs, initializers, the nodes in
// order through the importer table (or the plugin registry), and the graph outputs.
#include <fstream>
#include <limits>

#include "kiln/onnx_parser.h"
#include "onnx/import_context.h"

namespace kiln {
namespace {

using onnx_import::ImportContext;
using onnx_import::NodeContext;

// protobuf refuses messages over 2 GiB; kiln keeps weights inside the model.
constexpr size_t kMaxModelBytes = size_t(2000) << 20;
// Opsets 7 to 21 are the target; older models (PyTorch's exporter wrote opset 6 for years) are
// read too where the importers know the legacy forms (broadcast attributes, attribute inputs).
// Where a form changed in 18 to 21 the importer reads each: Reduce* axes as an input and
// noop_with_empty_axes (18), Split's num_outputs (18), Pad's axes input (18), Resize's axes and
// keep_aspect_ratio_policy (18), GroupNormalization's per-channel Scale and B (21); what kiln
// cannot do is refused by name (Resize antialias and half_pixel_symmetric, Pad's wrap mode,
// AveragePool dilations). The others changed only in the types they take.
constexpr int64_t kMinOpset = 1, kMaxOpset = 21;

Status importInputs(ImportContext& ctx, const onnx::GraphProto& g) {
  for (const auto& init : g.initializer()) {
    onnx_import::ConstTensor c;
    Status s = onnx_import::constantFromProto(init, c);
    if (!s) return s.withContext("initializer '" + init.name() + "'");
    onnx_import::Value v;
    v.constant = std::make_shared<const onnx_import::ConstTensor>(std::move(c));
    ctx.values[init.name()] = v;
  }
  for (const auto& in : g.input()) {
    if (ctx.values.count(in.name())) continue;  // an initializer listed as input (IR < 4)
    const std::string what = "graph input '" + in.name() + "'";
    if (in.name().empty()) return invalidArgument("a graph input has no name");
    if (!in.type().has_tensor_type()) return unsupported(what + " is not a tensor");
    const auto& tt = in.type().tensor_type();
    DataType type;
    if (!onnx_import::dataTypeFromOnnx(tt.elem_type(), type))
      return unsupported(
          what + " has element type " +
          onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(tt.elem_type())) +
          ", which kiln does not support");
    if (!tt.has_shape()) return unsupported(what + " has no shape; kiln needs static shapes");
    if (tt.shape().dim_size() > Dims::kMaxDims) return unsupported(what + " has more than 8 dims");
    Dims dims;
    for (int k = 0; k < tt.shape().dim_size(); ++k) {
      const auto& d = tt.shape().dim(k);
      if (!d.has_dim_value() || d.dim_value() < 0)
        return unsupported(what + " has a symbolic or unknown dim " + std::to_string(k) +
                           (d.has_dim_param() ? " ('" + d.dim_param() + "')" : "") +
                           "; kiln needs static shapes");
      dims.d[dims.nbDims++] = d.dim_value();
    }
    if (volume(dims) < 0) return unsupported(what + " is too large");
    ITensor* t = ctx.net.addInput(in.name().c_str(), type, dims);
    if (!t) return ctx.net.getLastError().withContext(what);
    onnx_import::Value v;
    v.tensor = t;
    ctx.values[in.name()] = v;
  }
  return Status::ok();
}

Status importNode(ImportContext& ctx, const onnx::NodeProto& node, int32_t index) {
  NodeContext n(ctx, node, index);
  // Every importer names its results after output 0; a node without outputs computes nothing.
  if (node.output_size() == 0) return n.error("the node has no outputs");
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    // Custom domains go to the plugin registry like unknown ops.
    return onnx_import::importPluginNode(n);
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && ctx.values.count(node.input(i)) == 0)
      return n.error("input '" + node.input(i) +
                     "' is not produced by any earlier node, "
                     "initializer or graph input");
  }
  const onnx_import::Importer* importer = onnx_import::findImporter(node.op_type());
  Status s = importer ? (*importer)(n) : onnx_import::importPluginNode(n);
  if (!n.attributeError().isOk()) return n.attributeError();
  if (!s) return s;
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty() && ctx.values.count(node.output(i)) == 0 && n.outputUsed(i))
      return n.unsupportedError("output " + std::to_string(i) + " ('" + node.output(i) +
                                "') is not supported");
  }
  return Status::ok();
}

Status importOutputs(ImportContext& ctx, const onnx::GraphProto& g) {
  for (const auto& out : g.output()) {
    auto it = ctx.values.find(out.name());
    if (it == ctx.values.end())
      return invalidArgument("graph output '" + out.name() + "' is not produced by any node");
    ITensor* t = it->second.tensor;
    const bool isConstant = it->second.constant != nullptr;
    if (!t)
      KILN_RETURN_IF_ERROR(onnx_import::constantTensor(ctx, it->second, out.name() + "_value", t));
    // An output that is an input, a constant, or another value's tensor gets its own copy
    // named after it (the network marks only layer outputs).
    if (isConstant || t->isNetworkInput() || t->isNetworkOutput() || out.name() != t->getName()) {
      ILayer* copy = onnx_import::addReshape(ctx.net, *t, t->getDimensions());
      if (!copy) return ctx.net.getLastError().withContext("graph output '" + out.name() + "'");
      t = copy->getOutput(0);
      if (!t->setName(out.name().c_str()))
        return invalidArgument("graph output name '" + out.name() + "' clashes with a tensor");
    }
    Status s = ctx.net.markOutput(*t);
    if (!s) return s.withContext("graph output '" + out.name() + "'");
  }
  return Status::ok();
}

Status parseModel(const onnx::ModelProto& model, INetworkDefinition& network) {
  int64_t opset = -1;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  if (opset < 0 && model.opset_import_size() == 0) opset = 1;  // IR 2: no opset_import means 1
  if (opset < kMinOpset || opset > kMaxOpset)
    return unsupported("the model imports opset " + std::to_string(opset) +
                       " of the default domain; kiln supports opsets 1 to 17 (7 to 17 fully)");
  if (!model.has_graph()) return invalidArgument("the model has no graph");
  const auto& g = model.graph();
  ImportContext ctx(network, opset);
  ctx.graph = &g;
  for (const auto& node : g.node())
    for (const auto& in : node.input()) ++ctx.uses[in];
  for (const auto& out : g.output()) {
    ++ctx.uses[out.name()];
    ctx.graphOutputs.insert(out.name());
  }
  KILN_RETURN_IF_ERROR(importInputs(ctx, g));
  for (int i = 0; i < g.node_size(); ++i) {
    KILN_RETURN_IF_ERROR(importNode(ctx, g.node(i), i));
  }
  if (g.output_size() == 0) return invalidArgument("the graph has no outputs");
  return importOutputs(ctx, g);
}

}  // namespace

Status parseOnnxBytes(const void* data, size_t size, const std::string& name,
                      INetworkDefinition& network) {
  const std::string what = "ONNX model '" + name + "'";
  if (!data || size == 0) return invalidArgument(what + " is empty");
  if (size > kMaxModelBytes) return unsupported(what + " is larger than 2000 MiB");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, int(size)))
    return corruptData(what + " is not a valid ONNX protobuf (truncated or corrupted?)");
  Status s = parseModel(model, network);
  return s ? s : s.withContext("while parsing " + what);
}

Status parseOnnxFile(const std::string& path, INetworkDefinition& network) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return ioError("cannot open ONNX model '" + path + "'");
  f.seekg(0, std::ios::end);
  const std::streamoff len = f.tellg();
  if (len < 0) return ioError("cannot read ONNX model '" + path + "'");
  if (size_t(len) > kMaxModelBytes)
    return unsupported("ONNX model '" + path + "' is larger than 2000 MiB");
  f.seekg(0);
  std::vector<char> bytes(static_cast<size_t>(len));
  if (len > 0 && !f.read(bytes.data(), len))
    return ioError("cannot read ONNX model '" + path + "'");
  return parseOnnxBytes(bytes.data(), bytes.size(), path, network);
}

}  // namespace kiln
