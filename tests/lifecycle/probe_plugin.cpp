#include "lifecycle/probe_plugin.h"

#include <cstring>
#include <memory>
#include <string>

#include "kiln/plugin_utils.h"

namespace kiln::testing {

std::atomic<int> gProbeLiveObjects{0};
std::atomic<int> gProbeInitializedObjects{0};

namespace {

struct ProbeSettings {
  float offset = 0.f;
  std::string failAt;
  int32_t failDeserialized = 0;
  int32_t dropNamespaceOnClone = 0;
  int32_t badRoundTrip = 0;
};

// What initialize() acquires: shared by an engine object and its context clones (guarantee 3).
struct SharedTable {
  float offset;
};

class ProbePlugin final : public IPlugin {
 public:
  ProbePlugin(ProbeSettings s, bool deserialized) : s_(std::move(s)), deserialized_(deserialized) {
    ++gProbeLiveObjects;
  }
  ~ProbePlugin() { --gProbeLiveObjects; }

  const char* getPluginName() const noexcept override { return "Probe"; }
  const char* getPluginVersion() const noexcept override { return "2"; }
  void setPluginNamespace(const char* ns) noexcept override { ns_ = ns ? ns : ""; }
  const char* getPluginNamespace() const noexcept override { return ns_.c_str(); }

  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t getOutputDataType(int32_t, const DataType* in, int32_t n,
                            DataType* out) const noexcept override {
    if (n != 1) return kPLUGIN_INVALID_ARGUMENT;
    *out = in[0];
    return kPLUGIN_SUCCESS;
  }
  int32_t getOutputDimensions(int32_t index, const DimsExprs* inputs, int32_t n, IExprBuilder&,
                              DimsExprs* out) noexcept override {
    if (fails("getOutputDimensions")) return kPLUGIN_FAILURE;
    if (index != 0 || n != 1) return kPLUGIN_INVALID_ARGUMENT;
    *out = inputs[0];
    return kPLUGIN_SUCCESS;
  }
  bool supportsFormatCombination(int32_t pos, const PluginTensorDesc* io, int32_t,
                                 int32_t) noexcept override {
    // fp32 linear only: the builder must convert whatever else it has.
    return io[pos].type == DataType::kFLOAT && io[pos].format == TensorFormat::kLINEAR;
  }
  int32_t configurePlugin(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                          int32_t) noexcept override {
    return fails("configurePlugin") ? kPLUGIN_FAILURE : kPLUGIN_SUCCESS;
  }
  int32_t onShapeChange(const PluginTensorDesc*, int32_t, const PluginTensorDesc*,
                        int32_t) noexcept override {
    return fails("onShapeChange") ? kPLUGIN_FAILURE : kPLUGIN_SUCCESS;
  }
  int32_t getWorkspaceSize(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                           int32_t, size_t* bytes) const noexcept override {
    if (fails("getWorkspaceSize")) return kPLUGIN_FAILURE;
    *bytes = 64;
    return kPLUGIN_SUCCESS;
  }
  int32_t initialize() noexcept override {
    if (fails("initialize")) return kPLUGIN_FAILURE;
    if (table_) return kPLUGIN_FAILURE;  // a second initialize() would leak: refuse loudly
    table_ = std::make_shared<SharedTable>(SharedTable{s_.offset});
    ownsTable_ = true;
    ++gProbeInitializedObjects;
    return kPLUGIN_SUCCESS;
  }
  int32_t terminate() noexcept override {
    if (!ownsTable_ || !table_) return kPLUGIN_FAILURE;  // never initialized: a contract breach
    table_.reset();
    --gProbeInitializedObjects;
    return fails("terminate") ? kPLUGIN_FAILURE : kPLUGIN_SUCCESS;
  }
  int32_t attachToContext(IPluginContextResources* r) noexcept override {
    if (fails("attachToContext") || !r) return kPLUGIN_FAILURE;
    scratch_ = static_cast<float*>(r->allocatePersistent(sizeof(float), 4));
    return scratch_ ? kPLUGIN_SUCCESS : kPLUGIN_FAILURE;
  }
  int32_t detachFromContext() noexcept override {
    scratch_ = nullptr;
    return fails("detachFromContext") ? kPLUGIN_FAILURE : kPLUGIN_SUCCESS;
  }
  int32_t enqueue(const PluginTensorDesc* in, const PluginTensorDesc*, const void* const* inputs,
                  void* const* outputs, void* workspace, Stream) noexcept override {
    if (fails("enqueue")) return kPLUGIN_FAILURE;
    if (!table_ || !workspace) return kPLUGIN_FAILURE;  // resources must have come via clone()
    const int64_t n = volume(in[0].dims);
    const float* x = static_cast<const float*>(inputs[0]);
    float* y = static_cast<float*>(outputs[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] + table_->offset;
    return kPLUGIN_SUCCESS;
  }
  size_t getSerializationSize() const noexcept override { return bytes().size(); }
  int32_t serialize(void* buffer, size_t length) const noexcept override {
    if (fails("serialize")) return kPLUGIN_FAILURE;
    std::string b = bytes();
    if (s_.badRoundTrip && deserialized_) b[0] ^= 1;  // a plugin that forgets part of its state
    if (length != b.size()) return kPLUGIN_INVALID_ARGUMENT;
    std::memcpy(buffer, b.data(), b.size());
    return kPLUGIN_SUCCESS;
  }
  IPlugin* clone() const noexcept override {
    if (fails("clone")) return nullptr;
    auto* copy = new ProbePlugin(s_, deserialized_);
    if (!s_.dropNamespaceOnClone) copy->ns_ = ns_;
    copy->table_ = table_;  // shared, not copied
    copy->ownsTable_ = false;
    return copy;
  }
  void destroy() noexcept override { delete this; }
  const char* getLastError() const noexcept override { return "the probe was told to fail here"; }

  std::string bytes() const {
    std::string out(sizeof(float) + 3 * sizeof(int32_t) + 4 + s_.failAt.size(), '\0');
    BufferWriter w(out.data(), out.size());
    w.write(s_.offset);
    w.write(s_.failDeserialized);
    w.write(s_.dropNamespaceOnClone);
    w.write(s_.badRoundTrip);
    w.writeString(s_.failAt);
    return out;
  }

 private:
  bool fails(const char* method) const {
    return s_.failAt == method && (!s_.failDeserialized || deserialized_);
  }

  ProbeSettings s_;
  bool deserialized_;
  std::string ns_;
  std::shared_ptr<SharedTable> table_;
  bool ownsTable_ = true;
  float* scratch_ = nullptr;
};

}  // namespace

const PluginFieldCollection* ProbeCreator::getFieldNames() noexcept {
  static const PluginField fields[] = {
      {"offset", nullptr, PluginFieldType::kFLOAT32, 1},
      {"fail_at", nullptr, PluginFieldType::kSTRING, 0},
      {"fail_deserialized", nullptr, PluginFieldType::kINT32, 1},
      {"drop_namespace_on_clone", nullptr, PluginFieldType::kINT32, 1},
      {"bad_round_trip", nullptr, PluginFieldType::kINT32, 1},
  };
  static const PluginFieldCollection collection{5, fields};
  return &collection;
}

IPlugin* ProbeCreator::createPlugin(const char*, const PluginFieldCollection* fc) noexcept {
  ProbeSettings s;
  for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
    const PluginField& f = fc->fields[i];
    const std::string name = f.name ? f.name : "";
    if (name == "offset" && f.type == PluginFieldType::kFLOAT32 && f.length == 1) {
      s.offset = *static_cast<const float*>(f.data);
    } else if (name == "fail_at" && f.type == PluginFieldType::kSTRING) {
      s.failAt = pluginFieldString(f);
    } else if (f.type == PluginFieldType::kINT32 && f.length == 1 &&
               (name == "fail_deserialized" || name == "drop_namespace_on_clone" ||
                name == "bad_round_trip")) {
      const int32_t v = *static_cast<const int32_t*>(f.data);
      (name == "fail_deserialized"         ? s.failDeserialized
       : name == "drop_namespace_on_clone" ? s.dropNamespaceOnClone
                                           : s.badRoundTrip) = v;
    } else {
      error_ = "unknown field, or a field of the wrong type or length";
      return nullptr;
    }
  }
  if (s.failAt == "createPlugin") {
    error_ = "the probe was told to fail in createPlugin";
    return nullptr;
  }
  return new ProbePlugin(std::move(s), false);
}

IPlugin* ProbeCreator::deserializePlugin(const char*, const void* data, size_t length) noexcept {
  ProbeSettings s;
  BufferReader r(data, length);
  if (!r.read(s.offset) || !r.read(s.failDeserialized) || !r.read(s.dropNamespaceOnClone) ||
      !r.read(s.badRoundTrip) || !r.readString(s.failAt, 64) || !r.finished()) {
    error_ = "the probe's serialized bytes are malformed";
    return nullptr;
  }
  if (s.failAt == "deserializePlugin") {
    error_ = "the probe was told to fail in deserializePlugin";
    return nullptr;
  }
  return new ProbePlugin(std::move(s), true);
}

ProbeCreator& probeCreator() {
  static ProbeCreator creator;
  return creator;
}

}  // namespace kiln::testing
