// The engine's side of the plugin contract: every IPlugin the engine holds is wrapped in a
// PluginObject, and every call the engine makes on a plugin or creator goes through here. That is
// where the guarantees of DESIGN.md §2 are kept (not merely hoped for) and where each call is
// traced:
//   1. destroy() exactly once, last: the destructor is the only place that calls it.
//   2. initialize() at most once; terminate() iff it succeeded, once, before destroy().
//   3. context objects refuse initialize().
//   4. configurePlugin() only on build objects, and before workspace/initialize/enqueue.
//   9. onShapeChange() only on context objects (the execution context decides when).
//   5. enqueue() on context objects only while attached, one thread at a time.
//   6. deserialized objects are re-serialized and compared byte for byte.
//   7. namespaces are set first, and clones must report their source's namespace.
//   8. a failed call becomes a Status naming plugin, version, namespace, layer, phase and method.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/plugin.h"
#include "kiln/status.h"
#include "plugin/trace.h"

namespace kiln {

// A tensor's description for a profile's box (DESIGN.md §7): `desc` with -1 on every axis where
// min and max differ. The builder configures plugins with it, the runtime asks their workspace.
DynamicPluginTensorDesc boxDesc(const PluginTensorDesc& desc, const Dims& min, const Dims& opt,
                                const Dims& max);

// The phase that calls made on this thread belong to (for the trace and for error messages).
TracePhase currentPhase();
// Sets the current phase for the life of the scope, restoring the previous one after.
class PhaseScope {
 public:
  explicit PhaseScope(TracePhase phase);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  TracePhase previous_;
};
const char* phaseName(TracePhase phase);

// What an object is for; decides which calls it may receive.
enum class PluginRole {
  kDefinition,  // from createPlugin, owned by the network
  kBuild,       // clone of a definition, configured and timed by the builder
  kEngine,      // from deserializePlugin, owned by the engine
  kContext,     // clone of an engine object, owned by one execution context
};

class PluginObject {
 public:
  // The creator calls. `layer` names the network layer the object serves.
  static Status create(IPluginCreator& creator, const std::string& pluginNamespace,
                       const std::string& layer, const PluginFieldCollection& fields,
                       std::shared_ptr<PluginObject>& out);
  static Status deserialize(IPluginCreator& creator, const std::string& pluginNamespace,
                            const std::string& layer, const void* data, size_t length,
                            std::shared_ptr<PluginObject>& out);

  // Terminates (if initialized) and destroys the plugin, in the current phase.
  ~PluginObject();
  PluginObject(const PluginObject&) = delete;
  PluginObject& operator=(const PluginObject&) = delete;

  // clone() of a definition gives a build object, of an engine object a context object.
  Status clone(std::shared_ptr<PluginObject>& out) const;

  Status getNbOutputs(int32_t& count) const;
  Status getOutputDataType(int32_t index, const std::vector<DataType>& inputTypes,
                           DataType& type) const;
  Status getOutputDimensions(int32_t index, const std::vector<Dims>& inputs, Dims& out) const;
  bool supportsFormatCombination(int32_t pos, const std::vector<PluginTensorDesc>& inOut,
                                 int32_t nbInputs) const;
  Status configure(const std::vector<DynamicPluginTensorDesc>& inputs,
                   const std::vector<DynamicPluginTensorDesc>& outputs);
  Status getWorkspaceSize(const std::vector<DynamicPluginTensorDesc>& inputs,
                          const std::vector<DynamicPluginTensorDesc>& outputs, size_t& bytes) const;
  // The concrete shapes of the next enqueue(); context objects only. The trace line carries the
  // shapes and the profile's range of each tensor (`minDims`, `maxDims`: inputs then outputs), so
  // that the checker can prove guarantee 9.
  Status onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                       const PluginTensorDesc* outputs, int32_t nbOutputs, const Dims* minDims,
                       const Dims* maxDims);
  Status initialize();
  Status terminate();
  Status attachToContext(IPluginContextResources* resources);
  Status detachFromContext();
  // Traced with the tensors' shapes (nbInputs/nbOutputs entries of the descs).
  Status enqueue(const PluginTensorDesc* inputDesc, int32_t nbInputs,
                 const PluginTensorDesc* outputDesc, int32_t nbOutputs, const void* const* inputs,
                 void* const* outputs, void* workspace, Stream stream);
  Status serialize(std::vector<uint8_t>& bytes) const;

  int64_t id() const { return id_; }
  PluginRole role() const { return role_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& pluginNamespace() const { return namespace_; }
  const std::string& layer() const { return layer_; }
  // The network layer was renamed after the plugin was made.
  void setLayer(const std::string& layer) { layer_ = layer; }
  // "plugin CropAndResize version 1 namespace '' (layer crop0)"
  std::string describe() const;

 private:
  PluginObject(IPlugin* plugin, int64_t id, PluginRole role, std::string name, std::string version,
               std::string pluginNamespace, std::string layer, bool fromDeserialize);

  // The object that a creator call (`call`: createPlugin or deserializePlugin, which `make` makes)
  // gives, the call traced and the object's namespace set; a failure names the plugin, version,
  // namespace, layer and phase. kEngine objects are the ones from deserializePlugin.
  static Status fromCreator(IPluginCreator& creator, const char* call,
                            const std::function<IPlugin*()>& make, PluginRole role,
                            const std::string& pluginNamespace, const std::string& layer,
                            std::shared_ptr<PluginObject>& out);

  // Traces a call on this object and turns a failure into a Status naming everything.
  Status traced(const char* call, int32_t status, int64_t result = -1,
                const TraceShapes* shapes = nullptr) const;
  Status failure(const char* call, const std::string& why) const;
  void trace(const char* call, int32_t status, int64_t result = -1,
             const TraceShapes* shapes = nullptr) const;

  IPlugin* plugin_;
  int64_t id_;
  PluginRole role_;
  std::string name_, version_, namespace_, layer_;
  bool fromDeserialize_;
  bool configured_ = false;
  bool initializeCalled_ = false;
  bool initialized_ = false;  // initialize() succeeded and terminate() not yet called
  bool attached_ = false;
  mutable std::atomic<bool> enqueueBusy_{false};
};

}  // namespace kiln
