// The CropAndResize plugin object (DESIGN.md §5): shape and format functions, configuration,
// serialization and the enqueue that runs the CPU kernel or, on kCUDA tensors, the CUDA kernel.
#pragma once

#include <string>

#include "crop_and_resize_config.h"
#include "crop_and_resize_fields.h"
#include "kiln/plugin.h"

namespace kiln::plugins {

class CropAndResizePlugin final : public IPlugin {
 public:
  CropAndResizePlugin(const char* layerName, const CropAndResizeFields& fields,
                      const CropAndResizeConfig& config);
  ~CropAndResizePlugin() = default;

  const char* getPluginName() const noexcept override;
  const char* getPluginVersion() const noexcept override;
  void setPluginNamespace(const char* pluginNamespace) noexcept override;
  const char* getPluginNamespace() const noexcept override;

  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t getOutputDataType(int32_t outputIndex, const DataType* inputTypes, int32_t nbInputs,
                            DataType* outputType) const noexcept override;
  int32_t getOutputDimensions(int32_t outputIndex, const DimsExprs* inputs, int32_t nbInputs,
                              IExprBuilder& exprBuilder, DimsExprs* output) noexcept override;
  bool supportsFormatCombination(int32_t pos, const PluginTensorDesc* inOut, int32_t nbInputs,
                                 int32_t nbOutputs) noexcept override;
  // Any axis may vary inside a profile (a dynamic batch, a dynamic number of boxes): the
  // configuration keeps types, formats and the device only, and the shapes are checked again at
  // each onShapeChange() and enqueue().
  int32_t configurePlugin(const DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                          const DynamicPluginTensorDesc* outputs,
                          int32_t nbOutputs) noexcept override;
  // Sized at the profile's max, which covers every shape below it.
  int32_t getWorkspaceSize(const DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                           const DynamicPluginTensorDesc* outputs, int32_t nbOutputs,
                           size_t* bytes) const noexcept override;
  int32_t onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                        const PluginTensorDesc* outputs, int32_t nbOutputs) noexcept override;

  // Neither kernel needs per-engine resources.
  int32_t initialize() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t terminate() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t attachToContext(IPluginContextResources* resources) noexcept override;
  int32_t detachFromContext() noexcept override;

  int32_t enqueue(const PluginTensorDesc* inputDesc, const PluginTensorDesc* outputDesc,
                  const void* const* inputs, void* const* outputs, void* workspace,
                  Stream stream) noexcept override;

  size_t getSerializationSize() const noexcept override;
  int32_t serialize(void* buffer, size_t length) const noexcept override;
  IPlugin* clone() const noexcept override;
  void destroy() noexcept override { delete this; }
  const char* getLastError() const noexcept override;

 private:
  CropAndResizePlugin(const CropAndResizePlugin&) = default;
  // Records "CropAndResize layer '<name>': <method>: <message>" and returns `code`.
  int32_t fail(int32_t code, const char* method, const std::string& message) const noexcept;
  // Checks the tensors against the configuration, then runs the CPU kernel or (kCUDA) launches
  // the CUDA kernel on `stream`.
  // `workspace` is the getWorkspaceSize() bytes for these tensors (the CUDA path may use it).
  int32_t enqueueChecked(const PluginTensorDesc* inputDesc, const PluginTensorDesc* outputDesc,
                         const void* const* inputs, void* const* outputs, void* workspace,
                         Stream stream);

  std::string layerName_;
  std::string namespace_;
  CropAndResizeFields fields_;
  CropAndResizeConfig config_;
  IPluginContextResources* resources_ = nullptr;
  mutable std::string lastError_;
};

}  // namespace kiln::plugins
