// ScaleBias: y = x * scale + bias, elementwise, for FP32 and FP16 tensors in linear format, on
// the CPU and (when the library is built with CUDA, see CMakeLists.txt) on CUDA.
//
// A complete, small kiln plugin, written against the public headers only, to copy from.
#pragma once

#include <string>

#include "kiln/plugin.h"

namespace kiln_example {

inline constexpr const char* kScaleBiasName = "ScaleBias";
inline constexpr const char* kScaleBiasVersion = "1";

class ScaleBiasPlugin final : public kiln::IPlugin {
 public:
  // `scale` and `bias` must be finite (the creator checks).
  ScaleBiasPlugin(float scale, float bias) : scale_(scale), bias_(bias) {}

  // Rebuilds a plugin from serialize()'s bytes; nullptr with `error` set if they are malformed.
  static ScaleBiasPlugin* deserialize(const void* data, size_t length, std::string& error);

  const char* getPluginName() const noexcept override { return kScaleBiasName; }
  const char* getPluginVersion() const noexcept override { return kScaleBiasVersion; }
  void setPluginNamespace(const char* pluginNamespace) noexcept override;
  const char* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t getOutputDataType(int32_t outputIndex, const kiln::DataType* inputTypes, int32_t nbInputs,
                            kiln::DataType* outputType) const noexcept override;
  int32_t getOutputDimensions(int32_t outputIndex, const kiln::DimsExprs* inputs, int32_t nbInputs,
                              kiln::IExprBuilder& exprBuilder,
                              kiln::DimsExprs* output) noexcept override;
  bool supportsFormatCombination(int32_t pos, const kiln::PluginTensorDesc* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override;
  // Elementwise, so every shape works: dims may be -1 (a dynamic axis of a profile).
  int32_t configurePlugin(const kiln::DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                          const kiln::DynamicPluginTensorDesc* outputs,
                          int32_t nbOutputs) noexcept override;
  int32_t getWorkspaceSize(const kiln::DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                           const kiln::DynamicPluginTensorDesc* outputs, int32_t nbOutputs,
                           size_t* bytes) const noexcept override;
  // Checks that input and output agree; nothing depends on the shape.
  int32_t onShapeChange(const kiln::PluginTensorDesc* inputs, int32_t nbInputs,
                        const kiln::PluginTensorDesc* outputs, int32_t nbOutputs) noexcept override;

  // ScaleBias holds no per-engine or per-context resources, so these only check their inputs.
  int32_t initialize() noexcept override { return kiln::kPLUGIN_SUCCESS; }
  int32_t terminate() noexcept override { return kiln::kPLUGIN_SUCCESS; }
  int32_t attachToContext(kiln::IPluginContextResources* resources) noexcept override;
  int32_t detachFromContext() noexcept override { return kiln::kPLUGIN_SUCCESS; }

  int32_t enqueue(const kiln::PluginTensorDesc* inputDesc, const kiln::PluginTensorDesc* outputDesc,
                  const void* const* inputs, void* const* outputs, void* workspace,
                  kiln::Stream stream) noexcept override;

  size_t getSerializationSize() const noexcept override;
  int32_t serialize(void* buffer, size_t length) const noexcept override;

  kiln::IPlugin* clone() const noexcept override;
  void destroy() noexcept override { delete this; }

  const char* getLastError() const noexcept override {
    return lastError_.empty() ? nullptr : lastError_.c_str();
  }

  float scale() const { return scale_; }
  float bias() const { return bias_; }

 private:
  // Records `message` for getLastError() and returns `code`.
  int32_t fail(int32_t code, const std::string& message) const noexcept;

  float scale_;
  float bias_;
  // The type configurePlugin() chose; -1 until configured. Serialized, because objects made by
  // deserializePlugin() (and their clones) are never configured.
  int32_t configuredType_ = -1;
  std::string namespace_;
  mutable std::string lastError_;
};

}  // namespace kiln_example
