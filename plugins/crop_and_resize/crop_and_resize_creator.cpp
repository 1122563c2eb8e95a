#include "crop_and_resize_creator.h"

#include <string>

#include "crop_and_resize_plugin.h"
#include "crop_and_resize_serial.h"

namespace kiln::plugins {
namespace {

thread_local std::string tLastError;

IPlugin* failWith(const char* method, const char* layerName, const std::string& message) noexcept {
  try {
    tLastError = std::string(kCropAndResizeName) + " layer '" + (layerName ? layerName : "") +
                 "': " + method + ": " + message;
  } catch (...) {
    tLastError.clear();
  }
  return nullptr;
}

}  // namespace

const char* CropAndResizeCreator::getPluginName() const noexcept { return kCropAndResizeName; }
const char* CropAndResizeCreator::getPluginVersion() const noexcept {
  return kCropAndResizeVersion;
}

const PluginFieldCollection* CropAndResizeCreator::getFieldNames() noexcept {
  return cropAndResizeFieldNames();
}

IPlugin* CropAndResizeCreator::createPlugin(const char* layerName,
                                            const PluginFieldCollection* fields) noexcept {
  try {
    CropAndResizeFields f;
    std::string error;
    if (!parseCropAndResizeFields(fields, f, error))
      return failWith("createPlugin", layerName, error);
    return new CropAndResizePlugin(layerName, f, CropAndResizeConfig());
  } catch (...) {
    return failWith("createPlugin", layerName, "out of memory");
  }
}

IPlugin* CropAndResizeCreator::deserializePlugin(const char* layerName, const void* data,
                                                 size_t length) noexcept {
  try {
    CropAndResizeFields f;
    CropAndResizeConfig c;
    std::string error;
    if (!readCropAndResize(data, length, f, c, error))
      return failWith("deserializePlugin", layerName, error);
    return new CropAndResizePlugin(layerName, f, c);
  } catch (...) {
    return failWith("deserializePlugin", layerName, "out of memory");
  }
}

const char* CropAndResizeCreator::getLastError() const noexcept {
  return tLastError.empty() ? nullptr : tLastError.c_str();
}

IPluginCreator& cropAndResizeCreator() {
  static CropAndResizeCreator creator;
  return creator;
}

}  // namespace kiln::plugins
