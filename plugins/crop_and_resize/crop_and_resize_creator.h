// The creator of CropAndResize plugins: field parsing and deserialization.
#pragma once

#include "kiln/plugin.h"

namespace kiln::plugins {

class CropAndResizeCreator final : public IPluginCreator {
 public:
  const char* getPluginName() const noexcept override;
  const char* getPluginVersion() const noexcept override;
  const PluginFieldCollection* getFieldNames() noexcept override;
  IPlugin* createPlugin(const char* layerName,
                        const PluginFieldCollection* fields) noexcept override;
  IPlugin* deserializePlugin(const char* layerName, const void* data,
                             size_t length) noexcept override;
  // The last failure on the calling thread: the creator is shared by every thread that builds
  // or loads, so one shared message would race.
  const char* getLastError() const noexcept override;
};

// The library's one instance.
IPluginCreator& cropAndResizeCreator();

}  // namespace kiln::plugins
