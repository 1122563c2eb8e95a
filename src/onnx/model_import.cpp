// parseOnnxBytes / parseOnnxFile: the model, its opset, graph inputs, initializers, the nodes in
// order through the importer table (or the plugin registry), and the graph outputs.
#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "kiln/onnx_parser.h"
#include "onnx/import_context.h"
#include "onnx/shape_corners.h"

namespace kiln {
namespace {

using onnx_import::Corner;
using onnx_import::ImportContext;
using onnx_import::NodeContext;
using onnx_import::ShapeCorners;

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

std::string shapeText(const Dims& d) {
  std::string s;
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? "x" : "") + std::to_string(d.d[i]);
  return d.nbDims == 0 ? "a scalar" : s;
}

// The dims of graph input `in`: the model's where it fixes them, the options' shape where it
// names or leaves them open. `symbols` remembers which input and axis first gave each dim_param
// its value, so that a second use must agree.
Status inputDims(const onnx::ValueInfoProto& in, const std::string& what,
                 const OnnxParserOptions& options,
                 std::map<std::string, std::pair<std::string, int64_t>>& symbols, Dims& dims) {
  const auto& shape = in.type().tensor_type().shape();
  const auto given = options.inputShapes.find(in.name());
  if (given != options.inputShapes.end() && given->second.nbDims != shape.dim_size())
    return invalidArgument(what + ": the shape given, " + shapeText(given->second) + ", has rank " +
                           std::to_string(given->second.nbDims) + " but the model's has rank " +
                           std::to_string(shape.dim_size()));
  dims = Dims{};
  for (int k = 0; k < shape.dim_size(); ++k) {
    const auto& d = shape.dim(k);
    const std::string axis = what + " axis " + std::to_string(k);
    if (given == options.inputShapes.end()) {
      if (!d.has_dim_value() || d.dim_value() < 0)
        return unsupported(what + " has a symbolic or unknown dim " + std::to_string(k) +
                           (d.has_dim_param() ? " ('" + d.dim_param() + "')" : "") +
                           "; give this input's shape to build for it (kiln run --input "
                           "NAME=FILE, kiln build/bench --shapes NAME:DIMS, or "
                           "OnnxParserOptions::inputShapes), or optimization profiles to build "
                           "for a range of shapes (kiln build --shapes NAME:MIN,OPT,MAX, or "
                           "OnnxParserOptions::profiles)");
      dims.d[dims.nbDims++] = d.dim_value();
      continue;
    }
    const int64_t v = given->second.d[k];
    if (v < 0)
      return invalidArgument(axis + ": the shape given has a negative dim " + std::to_string(v));
    if (d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() != v)
      return invalidArgument(axis + " is fixed at " + std::to_string(d.dim_value()) +
                             " in the model, but the shape given, " + shapeText(given->second) +
                             ", has " + std::to_string(v) + " there");
    if (d.has_dim_param() && !d.dim_param().empty()) {
      auto [it, first] = symbols.emplace(d.dim_param(), std::make_pair(axis, v));
      if (!first && it->second.second != v)
        return invalidArgument(axis + " and " + it->second.first + " are both '" + d.dim_param() +
                               "' in the model, but the shapes given make them " +
                               std::to_string(v) + " and " + std::to_string(it->second.second));
    }
    dims.d[dims.nbDims++] = v;
  }
  return Status::ok();
}

// A graph input declared dynamic (final parse with profiles): -1 at each symbolic or unknown dim,
// named after its dim_param, at its working shape (profile 0's opt) before any layer reads it.
Status addDynamicInput(ImportContext& ctx, const onnx::ValueInfoProto& in, const std::string& what,
                       DataType type, const Dims& working, ITensor*& t) {
  const auto& shape = in.type().tensor_type().shape();
  Dims declared;
  for (int k = 0; k < shape.dim_size(); ++k) {
    const auto& d = shape.dim(k);
    declared.d[declared.nbDims++] = d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1;
  }
  t = ctx.net.addInput(in.name().c_str(), type, declared);
  if (!t) return ctx.net.getLastError().withContext(what);
  for (int k = 0; k < shape.dim_size(); ++k) {
    const auto& d = shape.dim(k);
    if (declared.d[k] < 0 && d.has_dim_param() && !d.dim_param().empty() &&
        !t->setDimensionName(k, d.dim_param().c_str()))
      return internalError(what + ": the network refused the name '" + d.dim_param() +
                           "' for axis " + std::to_string(k));
  }
  Status s = ctx.net.setWorkingShape(in.name().c_str(), working);
  return s ? s : s.withContext(what + " at " + ctx.corners->working().label);
}

// Whether some node of `g` reads graph input `name` directly as a shape operand.
bool readAsShapeOperand(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& node : g.node()) {
    const std::vector<int32_t>& slots = onnxConstantInputs(node.op_type());
    for (int32_t slot : slots)
      if (slot < node.input_size() && node.input(slot) == name) return true;
  }
  return false;
}

// Graph input `in` (of `type`, at fixed `dims`) as a shape-value input, when the options give its
// values and a node reads it as a shape operand: the network input is marked with the values,
// and the importers see the values as a constant (a layer that reads the input as data gets a
// constant too: the engine checks that the input holds these values, and reads them on the host
// only, which also keeps a device kernel from reading host memory).
Status shapeValueInput(const onnx::GraphProto& g, const onnx::ValueInfoProto& in,
                       const std::string& what, const OnnxParserOptions& options, DataType type,
                       const Dims& dims, ITensor& t, onnx_import::Value& v) {
  const auto given = options.shapeValues.find(in.name());
  if (given == options.shapeValues.end() || !readAsShapeOperand(g, in.name())) return Status::ok();
  if (type != DataType::kINT32 && type != DataType::kINT64)
    return invalidArgument(what +
                           ": values are given for it, but a shape-value input must be "
                           "INT32 or INT64, and it is " +
                           dataTypeName(type));
  const std::vector<int64_t>& values = given->second;
  if (volume(dims) != static_cast<int64_t>(values.size()))
    return invalidArgument(what + ": " + std::to_string(values.size()) +
                           " values are given for it, but its shape " + shapeText(dims) +
                           " holds " + std::to_string(volume(dims)));
  if (!t.setShapeValues(values.data(), static_cast<int64_t>(values.size())))
    return invalidArgument(what + ": the values given do not fit its type " + dataTypeName(type));
  onnx_import::ConstTensor c;
  c.type = type;
  c.dims = dims;
  c.i = values;
  v.constant = std::make_shared<const onnx_import::ConstTensor>(std::move(c));
  v.tensor = nullptr;
  return Status::ok();
}

// `working`, in the final parse with profiles: the dynamic inputs' working shapes.
Status importInputs(ImportContext& ctx, const onnx::GraphProto& g, const OnnxParserOptions& options,
                    const std::map<std::string, Dims>* working) {
  for (const auto& init : g.initializer()) {
    onnx_import::ConstTensor c;
    Status s = onnx_import::constantFromProto(init, c);
    if (!s) return s.withContext("initializer '" + init.name() + "'");
    onnx_import::Value v;
    v.constant = std::make_shared<const onnx_import::ConstTensor>(std::move(c));
    ctx.values[init.name()] = v;
  }
  // A shape or values given for a name that is no graph input is a mistake worth naming.
  std::string inputNames;
  for (const auto& in : g.input())
    if (!ctx.values.count(in.name()))
      inputNames += (inputNames.empty() ? "'" : ", '") + in.name() + "'";
  const auto checkGraphInput = [&](const std::string& name, const char* what) {
    for (const auto& in : g.input())
      if (in.name() == name && !ctx.values.count(name)) return Status::ok();
    return invalidArgument(std::string(what) + " given for '" + name +
                           "', which is not a graph input of the model (its inputs: " + inputNames +
                           ")");
  };
  for (const auto& entry : options.inputShapes)
    KILN_RETURN_IF_ERROR(checkGraphInput(entry.first, "a shape is"));
  for (const auto& entry : options.shapeValues)
    KILN_RETURN_IF_ERROR(checkGraphInput(entry.first, "values are"));
  std::map<std::string, std::pair<std::string, int64_t>> symbols;
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
    ITensor* t = nullptr;
    if (working && working->count(in.name())) {
      KILN_RETURN_IF_ERROR(addDynamicInput(ctx, in, what, type, working->at(in.name()), t));
    } else {
      Dims dims;
      KILN_RETURN_IF_ERROR(inputDims(in, what, options, symbols, dims));
      if (volume(dims) < 0) return unsupported(what + " is too large");
      t = ctx.net.addInput(in.name().c_str(), type, dims);
      if (!t) return ctx.net.getLastError().withContext(what);
    }
    // With profiles the importers read a dynamic input through an identity shuffle, whose dims are
    // the working shape (the input's own getDimensions() keeps the -1s). The corner parses add it
    // too, so that their layers line up with the final network's; the builder removes it.
    if (ctx.corners && ctx.corners->working().shapes.count(in.name())) {
      ILayer* identity = ctx.net.addShuffle(*t, ShuffleParams{});
      if (!identity) return ctx.net.getLastError().withContext(what);
      t = identity->getOutput(0);
    }
    onnx_import::Value v;
    v.tensor = t;
    if (volume(t->getDimensions()) >= 0)  // fixed dims (a -1 makes the volume negative)
      KILN_RETURN_IF_ERROR(shapeValueInput(g, in, what, options, type, t->getDimensions(), *t, v));
    ctx.values[in.name()] = v;
  }
  return Status::ok();
}

Status importNodeAs(NodeContext& n) {
  ImportContext& ctx = n.ctx;
  const onnx::NodeProto& node = n.node;
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

// A node that must make layers (shape_corners.h: chooseLayerNodes) but whose importer folded an
// output to a constant: at a corner that constant becomes its network tensor now, where the final
// parse has the node's layer, so that the corner networks line up with the final one; the final
// parse refuses it (no layer computes it at run time).
Status outputsAsTensors(NodeContext& n) {
  ImportContext& ctx = n.ctx;
  for (int32_t i = 0; i < n.node.output_size(); ++i) {
    const std::string& name = n.node.output(i);
    auto it = ctx.values.find(name);
    if (name.empty() || it == ctx.values.end() || !it->second.constant || it->second.tensor)
      continue;
    if (ctx.corners->isFinal())
      return n.unsupportedError("output " + std::to_string(i) + " ('" + name +
                                "') depends on the input shapes and is read as data, but kiln "
                                "has no layer that computes a " +
                                n.node.op_type() + " at run time");
    ITensor* t = nullptr;
    KILN_RETURN_IF_ERROR(onnx_import::constantTensor(ctx, it->second, name, t));
    it->second.tensor = t;  // the constant stays, for shape operands
  }
  return Status::ok();
}

// A node that must make layers is folded first, as it was in the first round of corner parses
// (its inputs keep their constants beside their tensors), so that its outputs keep their values
// for readers that take them as shape operands (Range's limit from the sequence length that a
// padding mask's index math also reads as data). The folding must make no layer.
Status foldFirst(ImportContext& ctx, const onnx::NodeProto& node, int32_t index,
                 std::vector<std::shared_ptr<const onnx_import::ConstTensor>>& folded) {
  NodeContext f(ctx, node, index);
  f.folding = true;
  ctx.current = &f;
  const int32_t layers = ctx.net.getNbLayers();
  Status s = importNodeAs(f);
  ctx.current = nullptr;
  if (s && ctx.net.getNbLayers() != layers)
    return f.unsupportedError(
        "makes layers from constants, so kiln cannot keep its values for "
        "shape arithmetic beside the layers it must make");
  folded.clear();
  for (const auto& out : node.output()) {
    auto it = ctx.values.find(out);
    folded.push_back(s && it != ctx.values.end() ? it->second.constant : nullptr);
    if (it != ctx.values.end()) ctx.values.erase(it);
  }
  return Status::ok();
}

Status importNode(ImportContext& ctx, const onnx::NodeProto& node, int32_t index) {
  NodeContext n(ctx, node, index);
  std::vector<std::shared_ptr<const onnx_import::ConstTensor>> folded;
  if (n.makesLayers()) KILN_RETURN_IF_ERROR(foldFirst(ctx, node, index, folded));
  ctx.current = &n;
  Status s = importNodeAs(n);
  if (s && n.makesLayers()) s = outputsAsTensors(n);
  for (size_t i = 0; s && i < folded.size(); ++i) {
    auto it = ctx.values.find(node.output(int(i)));
    if (folded[i] && it != ctx.values.end() && it->second.tensor && !it->second.constant)
      it->second.constant = folded[i];
  }
  if (s && ctx.corners) s = ctx.corners->afterNode(n);
  ctx.current = nullptr;
  return s;
}

Status importOutputs(ImportContext& ctx, const onnx::GraphProto& g) {
  for (const auto& out : g.output()) {
    auto it = ctx.values.find(out.name());
    if (it == ctx.values.end())
      return invalidArgument("graph output '" + out.name() + "' is not produced by any node");
    ITensor* t = it->second.tensor;
    // A constant needs its own copy, unless it is also a layer's output of that name (a node that
    // follows the input shapes keeps its folded values beside its layer: model_import's
    // foldFirst).
    const bool isConstant = it->second.constant != nullptr && !(t && out.name() == t->getName());
    if (!t)
      KILN_RETURN_IF_ERROR(onnx_import::constantTensor(ctx, it->second, out.name() + "_value", t));
    // An output that is an input, a constant, or another value's tensor gets its own copy
    // named after it (the network marks only layer outputs).
    if (isConstant || t->isNetworkInput() || t->isNetworkOutput() || out.name() != t->getName()) {
      // Every reshape dim 0: a copy of the input's, whatever shape it has.
      Dims same;
      same.nbDims = t->getDimensions().nbDims;
      ILayer* copy = onnx_import::addReshape(ctx.net, *t, same);
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

// One parse of the graph into `network`: inputs static at options.inputShapes' shapes, except
// those `working` names (the final parse with profiles), dynamic at those working shapes.
Status parseGraph(const onnx::ModelProto& model, int64_t opset, INetworkDefinition& network,
                  const OnnxParserOptions& options, ShapeCorners* corners,
                  const std::map<std::string, Dims>* working) {
  const auto& g = model.graph();
  ImportContext ctx(network, opset);
  ctx.graph = &g;
  ctx.corners = corners;
  for (const auto& node : g.node())
    for (const auto& in : node.input()) ++ctx.uses[in];
  for (const auto& out : g.output()) {
    ++ctx.uses[out.name()];
    ctx.graphOutputs.insert(out.name());
  }
  KILN_RETURN_IF_ERROR(importInputs(ctx, g, options, working));
  for (int i = 0; i < g.node_size(); ++i) {
    KILN_RETURN_IF_ERROR(importNode(ctx, g.node(i), i));
  }
  if (g.output_size() == 0) return invalidArgument("the graph has no outputs");
  return importOutputs(ctx, g);
}

const char* selectorName(int32_t k) { return k == 0 ? "min" : k == 1 ? "opt" : "max"; }

std::string cornerText(const std::map<std::string, Dims>& shapes) {
  std::string s;
  for (const auto& [name, dims] : shapes)
    s += (s.empty() ? "" : ", ") + name + " " + shapeText(dims);
  return s;
}

// Checks that every profile gives each dynamic graph input (one with a symbolic or unknown dim)
// min, opt and max shapes the model allows, and lists the distinct corners: each profile's min,
// opt and max in turn, `working` the one that is profile 0's opt.
Status profileCorners(const onnx::GraphProto& g, const std::vector<OptimizationProfile>& profiles,
                      std::vector<Corner>& corners, size_t& working) {
  std::set<std::string> initializers;
  for (const auto& init : g.initializer()) initializers.insert(init.name());
  std::map<std::string, const onnx::TensorShapeProto*> inputs;  // null: no shape (refused later)
  std::vector<std::string> dynamic;
  std::string inputNames;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    inputNames += (inputNames.empty() ? "'" : ", '") + in.name() + "'";
    const bool shaped = in.type().has_tensor_type() && in.type().tensor_type().has_shape();
    inputs[in.name()] = shaped ? &in.type().tensor_type().shape() : nullptr;
    bool isDynamic = false;
    if (shaped)
      for (const auto& d : in.type().tensor_type().shape().dim())
        isDynamic = isDynamic || !d.has_dim_value() || d.dim_value() < 0;
    if (isDynamic) dynamic.push_back(in.name());
  }
  if (dynamic.empty())
    return invalidArgument(
        "optimization profiles are given (OnnxParserOptions::profiles), but no graph input of the "
        "model has a symbolic or unknown dim: the model is static, parse it without profiles");
  for (size_t p = 0; p < profiles.size(); ++p) {
    const OptimizationProfile& profile = profiles[p];
    const std::string pn = "profile " + std::to_string(p);
    for (const auto& name : profile.inputNames())
      if (!inputs.count(name))
        return invalidArgument(
            pn + " gives shapes for '" + name +
            "', which is not a graph input of the model (its inputs: " + inputNames + ")");
    for (const auto& [name, shape] : inputs) {
      const bool isDynamic = std::find(dynamic.begin(), dynamic.end(), name) != dynamic.end();
      if (!shape) continue;
      Dims d[3];
      bool all = true;
      for (int32_t k = 0; k < 3; ++k) {
        d[k] = profile.getDimensions(name.c_str(), OptProfileSelector(k));
        const std::string what =
            pn + "'s " + selectorName(k) + " shape for graph input '" + name + "'";
        if (d[k].nbDims < 0) {
          all = false;
          if (!isDynamic) continue;
          return invalidArgument(pn + " gives no " + selectorName(k) + " shape for graph input '" +
                                 name +
                                 "', which has symbolic or unknown dims: every profile must give "
                                 "min, opt and max shapes for each dynamic input");
        }
        if (d[k].nbDims != shape->dim_size())
          return invalidArgument(what + ", " + shapeText(d[k]) + ", has rank " +
                                 std::to_string(d[k].nbDims) + " but the model's has rank " +
                                 std::to_string(shape->dim_size()));
        for (int32_t a = 0; a < d[k].nbDims; ++a) {
          const auto& md = shape->dim(a);
          const std::string axis = what + " axis " + std::to_string(a);
          if (d[k].d[a] < 0)
            return invalidArgument(axis + " is " + std::to_string(d[k].d[a]) +
                                   "; dims must not be negative");
          if (md.has_dim_value() && md.dim_value() >= 0 && md.dim_value() != d[k].d[a])
            return invalidArgument(axis + " is " + std::to_string(d[k].d[a]) +
                                   ", but the model fixes that axis at " +
                                   std::to_string(md.dim_value()));
        }
      }
      if (!all) continue;
      for (int32_t a = 0; a < d[0].nbDims; ++a)
        if (d[0].d[a] > d[1].d[a] || d[1].d[a] > d[2].d[a])
          return invalidArgument(pn + ", graph input '" + name + "' axis " + std::to_string(a) +
                                 ": min " + std::to_string(d[0].d[a]) + ", opt " +
                                 std::to_string(d[1].d[a]) + " and max " +
                                 std::to_string(d[2].d[a]) + " must have min <= opt <= max");
    }
  }
  corners.clear();
  working = 0;
  for (size_t p = 0; p < profiles.size(); ++p) {
    for (int32_t k : {0, 1, 2}) {
      Corner c;
      c.label = "profile " + std::to_string(p) + "'s " + selectorName(k);
      for (const auto& name : dynamic)
        c.shapes[name] = profiles[p].getDimensions(name.c_str(), OptProfileSelector(k));
      size_t at = 0;
      while (at < corners.size() && corners[at].shapes != c.shapes) ++at;
      if (at == corners.size()) corners.push_back(std::move(c));
      if (p == 0 && k == 1) working = at;
    }
  }
  return Status::ok();
}

// Profiles (see shape_corners.h): a static parse at each corner, recording; the final parse with
// the dynamic inputs at profile 0's opt, made shape-generic from the records; the check of the
// final network at every corner.
Status parseWithProfiles(const onnx::ModelProto& model, int64_t opset, INetworkDefinition& network,
                         const OnnxParserOptions& options) {
  std::vector<Corner> list;
  size_t working = 0;
  KILN_RETURN_IF_ERROR(profileCorners(model.graph(), options.profiles, list, working));
  ShapeCorners corners(std::move(list), working);
  auto parseCorners = [&]() -> Status {
    for (size_t c = 0; c < corners.corners().size(); ++c) {
      const Corner& corner = corners.corners()[c];
      OnnxParserOptions at;
      at.inputShapes = corner.shapes;
      std::unique_ptr<INetworkDefinition> scratch = createNetwork();
      corners.beginCorner(c);
      Status s = parseGraph(model, opset, *scratch, at, &corners, nullptr);
      if (!s) return s.withContext("at " + corner.label + " (" + cornerText(corner.shapes) + ")");
      corners.endCorner(*scratch);
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(parseCorners());
  // Values that follow the input shapes and are read as data need layers: parse the corners
  // again with those nodes making them.
  if (corners.chooseLayerNodes(model.graph())) KILN_RETURN_IF_ERROR(parseCorners());
  corners.beginFinal();
  const std::map<std::string, Dims> shapes = corners.working().shapes;
  KILN_RETURN_IF_ERROR(parseGraph(model, opset, network, OnnxParserOptions{}, &corners, &shapes));
  return corners.verify(network);
}

Status parseModel(const onnx::ModelProto& model, INetworkDefinition& network,
                  const OnnxParserOptions& options) {
  int64_t opset = -1;
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") opset = imp.version();
  if (opset < 0 && model.opset_import_size() == 0) opset = 1;  // IR 2: no opset_import means 1
  if (opset < kMinOpset || opset > kMaxOpset)
    return unsupported("the model imports opset " + std::to_string(opset) +
                       " of the default domain; kiln supports opsets 1 to 21 (7 to 21 fully)");
  if (!model.has_graph()) return invalidArgument("the model has no graph");
  if (options.profiles.empty()) return parseGraph(model, opset, network, options, nullptr, nullptr);
  if (!options.inputShapes.empty())
    return invalidArgument(
        "OnnxParserOptions gives both inputShapes and profiles: inputShapes builds for one shape, "
        "profiles for ranges of shapes; give one of them");
  return parseWithProfiles(model, opset, network, options);
}

}  // namespace

Status parseOnnxBytes(const void* data, size_t size, const std::string& name,
                      INetworkDefinition& network, const OnnxParserOptions& options) {
  const std::string what = "ONNX model '" + name + "'";
  if (!data || size == 0) return invalidArgument(what + " is empty");
  if (size > kMaxModelBytes) return unsupported(what + " is larger than 2000 MiB");
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, int(size)))
    return corruptData(what + " is not a valid ONNX protobuf (truncated or corrupted?)");
  Status s = parseModel(model, network, options);
  return s ? s : s.withContext("while parsing " + what);
}

Status parseOnnxFile(const std::string& path, INetworkDefinition& network,
                     const OnnxParserOptions& options) {
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
  return parseOnnxBytes(bytes.data(), bytes.size(), path, network, options);
}

}  // namespace kiln
