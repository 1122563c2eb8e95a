// The creator for ScaleBias: makes plugins from fields or from serialized bytes.
#pragma once

#include <string>

#include "kiln/plugin.h"

namespace kiln_example {

class ScaleBiasCreator final : public kiln::IPluginCreator {
 public:
  ScaleBiasCreator();

  const char* getPluginName() const noexcept override;
  const char* getPluginVersion() const noexcept override;
  const kiln::PluginFieldCollection* getFieldNames() noexcept override;

  // Fields (both optional): `scale` (default 1) and `bias` (default 0), one value each, of type
  // kFLOAT32 or kFLOAT64. A float64 is rounded to the nearest float32; one that is outside the
  // float32 range, or any value that is not finite, is refused naming the field. Unknown fields
  // are refused too, so that a misspelt name does not silently fall back to a default.
  kiln::IPlugin* createPlugin(const char* layerName,
                              const kiln::PluginFieldCollection* fields) noexcept override;
  kiln::IPlugin* deserializePlugin(const char* layerName, const void* data,
                                   size_t length) noexcept override;
  // The message for the calling thread's last failed call, or nullptr.
  const char* getLastError() const noexcept override;

 private:
  kiln::PluginField fieldInfo_[2];
  kiln::PluginFieldCollection fieldCollection_;
};

}  // namespace kiln_example
