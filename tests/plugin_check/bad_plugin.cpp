#include "plugin_check/bad_plugin.h"

#include <atomic>
#include <cstring>
#include <string>

namespace kiln::testing {
namespace {

enum Mode : int32_t { kNone = 0, kRoundTrip = 1, kContexts = 2, kWrongValue = 3 };

std::atomic<int64_t> gCounter{0};

class BadPlugin final : public IPlugin {
 public:
  BadPlugin(int32_t mode, bool fromBytes) : mode_(mode), fromBytes_(fromBytes) {}
  const char* getPluginName() const noexcept override { return "PluginCheckBad"; }
  const char* getPluginVersion() const noexcept override { return "1"; }
  void setPluginNamespace(const char* ns) noexcept override { ns_ = ns ? ns : ""; }
  const char* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t getOutputDataType(int32_t, const DataType* in, int32_t,
                            DataType* out) const noexcept override {
    *out = in[0];
    return kPLUGIN_SUCCESS;
  }
  int32_t getOutputDimensions(int32_t, const DimsExprs* in, int32_t, IExprBuilder&,
                              DimsExprs* out) noexcept override {
    *out = in[0];
    return kPLUGIN_SUCCESS;
  }
  bool supportsFormatCombination(int32_t pos, const PluginTensorDesc* io, int32_t,
                                 int32_t) noexcept override {
    return io[pos].type == DataType::kFLOAT && io[pos].format == TensorFormat::kLINEAR &&
           io[pos].device == DeviceKind::kCPU;
  }
  int32_t configurePlugin(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                          int32_t) noexcept override {
    return kPLUGIN_SUCCESS;
  }
  int32_t onShapeChange(const PluginTensorDesc*, int32_t, const PluginTensorDesc*,
                        int32_t) noexcept override {
    return kPLUGIN_SUCCESS;
  }
  int32_t getWorkspaceSize(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                           int32_t, size_t* bytes) const noexcept override {
    *bytes = 0;
    return kPLUGIN_SUCCESS;
  }
  int32_t initialize() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t terminate() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t attachToContext(IPluginContextResources*) noexcept override { return kPLUGIN_SUCCESS; }
  int32_t detachFromContext() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t enqueue(const PluginTensorDesc* inDesc, const PluginTensorDesc*, const void* const* in,
                  void* const* out, void*, Stream) noexcept override {
    int64_t n = 1;
    for (int32_t i = 0; i < inDesc[0].dims.nbDims; ++i) n *= inDesc[0].dims.d[i];
    const float add = mode_ == kWrongValue ? 1.5f
                      : mode_ == kContexts ? 1.0f + static_cast<float>(gCounter.fetch_add(1))
                                           : 1.0f;
    const float* x = static_cast<const float*>(in[0]);
    float* y = static_cast<float*>(out[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] + add;
    return kPLUGIN_SUCCESS;
  }
  size_t getSerializationSize() const noexcept override { return 5; }
  int32_t serialize(void* buffer, size_t length) const noexcept override {
    if (length < 5) return kPLUGIN_INVALID_ARGUMENT;
    std::memcpy(buffer, &mode_, 4);
    // The defect: a deserialized object writes a different last byte.
    static_cast<uint8_t*>(buffer)[4] = (mode_ == kRoundTrip && fromBytes_) ? 1 : 0;
    return kPLUGIN_SUCCESS;
  }
  IPlugin* clone() const noexcept override {
    auto* p = new BadPlugin(mode_, fromBytes_);
    p->ns_ = ns_;
    return p;
  }
  void destroy() noexcept override { delete this; }
  const char* getLastError() const noexcept override { return nullptr; }

 private:
  int32_t mode_;
  bool fromBytes_;
  std::string ns_;
};

class BadCreator final : public IPluginCreator {
 public:
  BadCreator() {
    field_ = {"mode", nullptr, PluginFieldType::kSTRING, 0};
    fields_ = {1, &field_};
  }
  const char* getPluginName() const noexcept override { return "PluginCheckBad"; }
  const char* getPluginVersion() const noexcept override { return "1"; }
  const PluginFieldCollection* getFieldNames() noexcept override { return &fields_; }
  IPlugin* createPlugin(const char*, const PluginFieldCollection* fc) noexcept override {
    int32_t mode = kNone;
    for (int32_t i = 0; fc && i < fc->nbFields; ++i) {
      if (std::strcmp(fc->fields[i].name, "mode") != 0) return nullptr;
      const std::string v(static_cast<const char*>(fc->fields[i].data), fc->fields[i].length);
      mode = v == "round_trip"    ? kRoundTrip
             : v == "contexts"    ? kContexts
             : v == "wrong_value" ? kWrongValue
                                  : kNone;
    }
    return new BadPlugin(mode, false);
  }
  IPlugin* deserializePlugin(const char*, const void* data, size_t length) noexcept override {
    if (length != 5) return nullptr;
    int32_t mode;
    std::memcpy(&mode, data, 4);
    return new BadPlugin(mode, true);
  }
  const char* getLastError() const noexcept override { return nullptr; }

 private:
  PluginField field_;
  PluginFieldCollection fields_;
};

}  // namespace

IPluginCreator& badPluginCreator() {
  static BadCreator creator;
  return creator;
}

}  // namespace kiln::testing
