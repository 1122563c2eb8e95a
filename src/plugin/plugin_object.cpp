#include "plugin/plugin_object.h"

#include <cstring>

#include "core/dim_expr.h"
#include "core/log.h"

namespace kiln {
namespace {

thread_local TracePhase tCurrentPhase = TracePhase::kParse;

// A status kiln writes into the trace when it rejects what a call returned even though the plugin
// reported success (a namespace or round-trip mismatch); see DESIGN.md §2.
constexpr int32_t kRejectedByEngine = -1;

const char* orEmpty(const char* s) { return s ? s : ""; }

}  // namespace

TracePhase currentPhase() { return tCurrentPhase; }

PhaseScope::PhaseScope(TracePhase phase) : previous_(tCurrentPhase) { tCurrentPhase = phase; }
PhaseScope::~PhaseScope() { tCurrentPhase = previous_; }

const char* phaseName(TracePhase phase) { return tracePhaseName(phase); }

PluginObject::PluginObject(IPlugin* plugin, int64_t id, PluginRole role, std::string name,
                           std::string version, std::string pluginNamespace, std::string layer,
                           bool fromDeserialize)
    : plugin_(plugin),
      id_(id),
      role_(role),
      name_(std::move(name)),
      version_(std::move(version)),
      namespace_(std::move(pluginNamespace)),
      layer_(std::move(layer)),
      fromDeserialize_(fromDeserialize) {}

std::string PluginObject::describe() const {
  return "plugin " + name_ + " version " + version_ + " namespace '" + namespace_ + "' (layer '" +
         layer_ + "')";
}

void PluginObject::trace(const char* call, int32_t status, int64_t result,
                         const TraceShapes* shapes) const {
  Tracer& tracer = Tracer::instance();
  if (!tracer.enabled()) return;
  TraceEvent e;
  e.phase = currentPhase();
  e.plugin = name_.c_str();
  e.version = version_.c_str();
  e.ns = namespace_.c_str();
  e.layer = layer_.c_str();
  e.call = call;
  e.object = id_;
  e.result = result;
  e.status = status;
  e.shapes = shapes;
  tracer.write(e);
}

Status PluginObject::failure(const char* call, const std::string& why) const {
  return pluginFailure(describe() + ": " + call + "() failed in phase " +
                       phaseName(currentPhase()) + ": " + why);
}

Status PluginObject::traced(const char* call, int32_t status, int64_t result,
                            const TraceShapes* shapes) const {
  trace(call, status, result, shapes);
  if (status == kPLUGIN_SUCCESS) return Status::ok();
  const char* detail = plugin_->getLastError();
  return failure(call, "status " + std::to_string(status) +
                           (detail && *detail ? std::string(": ") + detail : std::string()));
}

namespace {

// Traces a creator call (object null) for the plugin about to be made.
void traceCreatorCall(const char* name, const char* version, const std::string& ns,
                      const std::string& layer, const char* call, int64_t result, int32_t status) {
  Tracer& tracer = Tracer::instance();
  if (!tracer.enabled()) return;
  TraceEvent e;
  e.phase = currentPhase();
  e.plugin = name;
  e.version = version;
  e.ns = ns.c_str();
  e.layer = layer.c_str();
  e.call = call;
  e.object = -1;
  e.result = result;
  e.status = status;
  tracer.write(e);
}

std::string creatorError(IPluginCreator& creator) {
  const char* e = creator.getLastError();
  return e && *e ? e : "the creator gave no reason";
}

}  // namespace

Status PluginObject::fromCreator(IPluginCreator& creator, const char* call,
                                 const std::function<IPlugin*()>& make, PluginRole role,
                                 const std::string& pluginNamespace, const std::string& layer,
                                 std::shared_ptr<PluginObject>& out) {
  const std::string name = orEmpty(creator.getPluginName());
  const std::string version = orEmpty(creator.getPluginVersion());
  IPlugin* plugin = make();
  const int64_t id = plugin ? Tracer::instance().newObjectId() : -1;
  traceCreatorCall(name.c_str(), version.c_str(), pluginNamespace, layer, call, id,
                   plugin ? kPLUGIN_SUCCESS : kPLUGIN_FAILURE);
  if (!plugin) {
    return pluginFailure("plugin " + name + " version " + version + " namespace '" +
                         pluginNamespace + "' (layer '" + layer + "'): " + call +
                         "() failed in phase " + phaseName(currentPhase()) + ": " +
                         creatorError(creator));
  }
  out.reset(new PluginObject(plugin, id, role, name, version, pluginNamespace, layer,
                             role == PluginRole::kEngine));
  out->plugin_->setPluginNamespace(out->namespace_.c_str());
  out->trace("setPluginNamespace", kPLUGIN_SUCCESS);
  return Status::ok();
}

Status PluginObject::create(IPluginCreator& creator, const std::string& pluginNamespace,
                            const std::string& layer, const PluginFieldCollection& fields,
                            std::shared_ptr<PluginObject>& out) {
  return fromCreator(
      creator, "createPlugin", [&] { return creator.createPlugin(layer.c_str(), &fields); },
      PluginRole::kDefinition, pluginNamespace, layer, out);
}

Status PluginObject::deserialize(IPluginCreator& creator, const std::string& pluginNamespace,
                                 const std::string& layer, const void* data, size_t length,
                                 std::shared_ptr<PluginObject>& out) {
  std::shared_ptr<PluginObject> object;
  KILN_RETURN_IF_ERROR(fromCreator(
      creator, "deserializePlugin",
      [&] { return creator.deserializePlugin(layer.c_str(), data, length); }, PluginRole::kEngine,
      pluginNamespace, layer, object));

  // Guarantee 6: what we got must serialize back to exactly the bytes it came from.
  std::vector<uint8_t> again;
  const size_t size = object->plugin_->getSerializationSize();
  object->trace("getSerializationSize", kPLUGIN_SUCCESS);
  again.resize(size);
  int32_t status = object->plugin_->serialize(again.data(), again.size());
  const bool same = status == kPLUGIN_SUCCESS && size == length &&
                    (length == 0 || std::memcmp(again.data(), data, length) == 0);
  object->trace("serialize", status != kPLUGIN_SUCCESS ? status : (same ? 0 : kRejectedByEngine));
  if (status != kPLUGIN_SUCCESS) {
    const char* detail = object->plugin_->getLastError();
    return object->failure("serialize", "status " + std::to_string(status) +
                                            (detail && *detail ? std::string(": ") + detail : ""));
  }
  if (!same) {
    return object->failure("serialize",
                           "round trip broken: serialize() of the deserialized object gave " +
                               std::to_string(size) + " bytes that differ from the " +
                               std::to_string(length) + " bytes it was made from (guarantee 6)");
  }
  out = std::move(object);
  return Status::ok();
}

PluginObject::~PluginObject() {
  if (attached_) {
    const int32_t s = plugin_->detachFromContext();
    trace("detachFromContext", s);
  }
  if (initialized_) {
    const int32_t s = plugin_->terminate();
    trace("terminate", s);
    if (s != kPLUGIN_SUCCESS) logMessage(Severity::kWarning, describe() + ": terminate() failed");
  }
  plugin_->destroy();
  trace("destroy", kPLUGIN_SUCCESS);
}

Status PluginObject::clone(std::shared_ptr<PluginObject>& out) const {
  PluginRole role;
  if (role_ == PluginRole::kDefinition) {
    role = PluginRole::kBuild;
  } else if (role_ == PluginRole::kEngine) {
    role = PluginRole::kContext;
  } else {
    return internalError(describe() + ": clone() of a build or context object is not allowed");
  }
  IPlugin* copy = plugin_->clone();
  const int64_t newId = copy ? Tracer::instance().newObjectId() : -1;
  trace("clone", copy ? kPLUGIN_SUCCESS : kPLUGIN_FAILURE, newId);
  if (!copy) {
    const char* detail = plugin_->getLastError();
    return failure("clone", detail && *detail ? detail : "returned null");
  }
  std::shared_ptr<PluginObject> object(
      new PluginObject(copy, newId, role, name_, version_, namespace_, layer_, fromDeserialize_));
  object->configured_ = configured_;
  // Guarantee 7: a clone carries its source's namespace. A clone that forgot is refused here,
  // before it can write a wrong name into a plan.
  const char* ns = object->plugin_->getPluginNamespace();
  const bool same = ns && namespace_ == ns;
  object->trace("getPluginNamespace", same ? kPLUGIN_SUCCESS : kRejectedByEngine);
  if (!same) {
    return object->failure("clone", std::string("the clone reports namespace '") + orEmpty(ns) +
                                        "' but its source has '" + namespace_ +
                                        "': clone() must copy the namespace (guarantee 7)");
  }
  out = std::move(object);
  return Status::ok();
}

Status PluginObject::getNbOutputs(int32_t& count) const {
  count = plugin_->getNbOutputs();
  trace("getNbOutputs", kPLUGIN_SUCCESS);
  if (count < 1 || count > 64) {
    return failure("getNbOutputs", "returned " + std::to_string(count) + " (must be 1..64)");
  }
  return Status::ok();
}

Status PluginObject::getOutputDataType(int32_t index, const std::vector<DataType>& inputTypes,
                                       DataType& type) const {
  const int32_t s = plugin_->getOutputDataType(index, inputTypes.data(),
                                               static_cast<int32_t>(inputTypes.size()), &type);
  KILN_RETURN_IF_ERROR(traced("getOutputDataType", s));
  if (dataTypeSize(type) == 0) {
    return failure("getOutputDataType",
                   "returned an invalid data type " + std::to_string(static_cast<int>(type)));
  }
  return Status::ok();
}

Status PluginObject::getOutputDimensions(int32_t index, const std::vector<Dims>& inputs,
                                         Dims& out) const {
  DimExprBuilder builder;
  std::vector<DimsExprs> in;
  in.reserve(inputs.size());
  for (const Dims& d : inputs) in.push_back(builder.toExprs(d));
  DimsExprs result;
  const int32_t s = plugin_->getOutputDimensions(index, in.data(), static_cast<int32_t>(in.size()),
                                                 builder, &result);
  KILN_RETURN_IF_ERROR(traced("getOutputDimensions", s));
  if (!toDims(result, out)) {
    return failure("getOutputDimensions",
                   "output " + std::to_string(index) +
                       " has an invalid shape (rank outside 0..8, or a null, non-constant or "
                       "negative dimension)");
  }
  return Status::ok();
}

bool PluginObject::supportsFormatCombination(int32_t pos,
                                             const std::vector<PluginTensorDesc>& inOut,
                                             int32_t nbInputs) const {
  const bool yes = plugin_->supportsFormatCombination(
      pos, inOut.data(), nbInputs, static_cast<int32_t>(inOut.size()) - nbInputs);
  trace("supportsFormatCombination", kPLUGIN_SUCCESS);
  return yes;
}

Status PluginObject::configure(const std::vector<DynamicPluginTensorDesc>& inputs,
                               const std::vector<DynamicPluginTensorDesc>& outputs) {
  if (role_ != PluginRole::kBuild) {
    return internalError(describe() +
                         ": configurePlugin() is only for build objects (guarantee 4)");
  }
  const int32_t s = plugin_->configurePlugin(inputs.data(), static_cast<int32_t>(inputs.size()),
                                             outputs.data(), static_cast<int32_t>(outputs.size()));
  KILN_RETURN_IF_ERROR(traced("configurePlugin", s));
  configured_ = true;
  return Status::ok();
}

Status PluginObject::getWorkspaceSize(const std::vector<DynamicPluginTensorDesc>& inputs,
                                      const std::vector<DynamicPluginTensorDesc>& outputs,
                                      size_t& bytes) const {
  if (role_ == PluginRole::kBuild && !configured_) {
    return internalError(describe() + ": getWorkspaceSize() before configurePlugin()");
  }
  bytes = 0;
  const int32_t s =
      plugin_->getWorkspaceSize(inputs.data(), static_cast<int32_t>(inputs.size()), outputs.data(),
                                static_cast<int32_t>(outputs.size()), &bytes);
  return traced("getWorkspaceSize", s);
}

Status PluginObject::initialize() {
  if (role_ == PluginRole::kContext || role_ == PluginRole::kDefinition) {
    return internalError(describe() + ": initialize() on a " +
                         (role_ == PluginRole::kContext ? "context" : "definition") +
                         " object (guarantee 3)");
  }
  if (initializeCalled_) return internalError(describe() + ": initialize() twice (guarantee 2)");
  if (role_ == PluginRole::kBuild && !configured_) {
    return internalError(describe() + ": initialize() before configurePlugin() (guarantee 4)");
  }
  initializeCalled_ = true;
  const int32_t s = plugin_->initialize();
  KILN_RETURN_IF_ERROR(traced("initialize", s));
  initialized_ = true;
  return Status::ok();
}

Status PluginObject::terminate() {
  if (!initialized_) return Status::ok();  // nothing acquired: terminate() is not called
  initialized_ = false;
  return traced("terminate", plugin_->terminate());
}

Status PluginObject::attachToContext(IPluginContextResources* resources) {
  if (role_ != PluginRole::kContext) {
    return internalError(describe() + ": attachToContext() on a non-context object");
  }
  if (attached_) return internalError(describe() + ": attachToContext() twice");
  const int32_t s = plugin_->attachToContext(resources);
  KILN_RETURN_IF_ERROR(traced("attachToContext", s));
  attached_ = true;
  return Status::ok();
}

Status PluginObject::detachFromContext() {
  if (!attached_) return Status::ok();
  attached_ = false;
  return traced("detachFromContext", plugin_->detachFromContext());
}

namespace {

// Only built when tracing is on.
std::string descShapes(const PluginTensorDesc* inputs, int32_t nbInputs,
                       const PluginTensorDesc* outputs, int32_t nbOutputs) {
  std::vector<Dims> dims;
  for (int32_t i = 0; i < nbInputs; ++i) dims.push_back(inputs[i].dims);
  for (int32_t o = 0; o < nbOutputs; ++o) dims.push_back(outputs[o].dims);
  return traceShapesText(dims.data(), nbInputs, nbOutputs);
}

}  // namespace

DynamicPluginTensorDesc boxDesc(const PluginTensorDesc& desc, const Dims& min, const Dims& opt,
                                const Dims& max) {
  DynamicPluginTensorDesc d{desc, min, opt, max};
  for (int32_t k = 0; k < d.desc.dims.nbDims && k < Dims::kMaxDims; ++k)
    d.desc.dims.d[k] = min.d[k] == max.d[k] ? min.d[k] : -1;
  return d;
}

Status PluginObject::onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                                   const PluginTensorDesc* outputs, int32_t nbOutputs,
                                   const Dims* minDims, const Dims* maxDims) {
  if (role_ != PluginRole::kContext)
    return internalError(describe() +
                         ": onShapeChange() is only for context objects (guarantee 9)");
  if (!attached_)
    return internalError(describe() + ": onShapeChange() on a context object that is not attached");
  const int32_t s = plugin_->onShapeChange(inputs, nbInputs, outputs, nbOutputs);
  if (!Tracer::instance().enabled()) return traced("onShapeChange", s);
  TraceShapes shapes;
  shapes.shapes = descShapes(inputs, nbInputs, outputs, nbOutputs);
  shapes.min = traceShapesText(minDims, nbInputs, nbOutputs);
  shapes.max = traceShapesText(maxDims, nbInputs, nbOutputs);
  return traced("onShapeChange", s, -1, &shapes);
}

Status PluginObject::enqueue(const PluginTensorDesc* inputDesc, int32_t nbInputs,
                             const PluginTensorDesc* outputDesc, int32_t nbOutputs,
                             const void* const* inputs, void* const* outputs, void* workspace,
                             Stream stream) {
  if (role_ == PluginRole::kContext && !attached_) {
    return internalError(describe() + ": enqueue() on a context object that is not attached");
  }
  if (role_ == PluginRole::kBuild && !configured_) {
    return internalError(describe() + ": enqueue() before configurePlugin() (guarantee 4)");
  }
  if (role_ == PluginRole::kDefinition || role_ == PluginRole::kEngine) {
    return internalError(describe() + ": enqueue() on a definition or engine object");
  }
  // Guarantee 5: one thread at a time per object. A second caller is a misuse of one execution
  // context from two threads; refuse it rather than let the plugin race.
  if (enqueueBusy_.exchange(true, std::memory_order_acquire)) {
    return invalidArgument(describe() +
                           ": enqueue() while another thread is enqueuing the same object; an "
                           "execution context must be used by one thread at a time");
  }
  const int32_t s = plugin_->enqueue(inputDesc, outputDesc, inputs, outputs, workspace, stream);
  enqueueBusy_.store(false, std::memory_order_release);
  if (!Tracer::instance().enabled()) return traced("enqueue", s);
  TraceShapes shapes;
  shapes.shapes = descShapes(inputDesc, nbInputs, outputDesc, nbOutputs);
  return traced("enqueue", s, -1, &shapes);
}

Status PluginObject::serialize(std::vector<uint8_t>& bytes) const {
  const size_t size = plugin_->getSerializationSize();
  trace("getSerializationSize", kPLUGIN_SUCCESS);
  if (size > (size_t(1) << 31)) {
    return failure("getSerializationSize",
                   "returned " + std::to_string(size) + " bytes (max 2 GiB)");
  }
  bytes.assign(size, 0);
  return traced("serialize", plugin_->serialize(bytes.data(), bytes.size()));
}

}  // namespace kiln
