#include "scale_bias_creator.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "kiln/plugin_utils.h"
#include "scale_bias_plugin.h"

namespace kiln_example {
namespace {

using kiln::PluginField;
using kiln::PluginFieldType;

// Per thread, so that two threads creating plugins at once each read their own error.
std::string& lastError() {
  thread_local std::string error;
  return error;
}

void setError(const char* layerName, const std::string& message) {
  try {
    lastError() =
        std::string(kScaleBiasName) + " layer '" + (layerName ? layerName : "") + "': " + message;
  } catch (...) {
  }
}

// Reads a one-element float field into `out`; false (with `error`) if it has the wrong shape or
// type, or a value that a float32 cannot hold.
bool readFloatField(const PluginField& f, float& out, std::string& error) {
  const std::string name = f.name;
  if (!f.data || f.length != 1) {
    error =
        "field '" + name + "' must hold exactly one value (has " + std::to_string(f.length) + ")";
    return false;
  }
  double value = 0;
  if (f.type == PluginFieldType::kFLOAT32) {
    float v;
    std::memcpy(&v, f.data, sizeof v);
    value = v;
  } else if (f.type == PluginFieldType::kFLOAT64) {
    std::memcpy(&value, f.data, sizeof value);
    // Rounding to the nearest float32 is the documented behaviour; leaving its range is not.
    if (std::isfinite(value) && std::fabs(value) > std::numeric_limits<float>::max()) {
      error = "field '" + name + "' (float64) is outside the float32 range";
      return false;
    }
  } else {
    error = "field '" + name + "' must be kFLOAT32 or kFLOAT64, got type " +
            std::to_string(static_cast<int>(f.type));
    return false;
  }
  if (!std::isfinite(value)) {
    error = "field '" + name + "' must be finite";
    return false;
  }
  out = static_cast<float>(value);
  return true;
}

}  // namespace

ScaleBiasCreator::ScaleBiasCreator() {
  fieldInfo_[0] = {"scale", nullptr, PluginFieldType::kFLOAT32, 1};
  fieldInfo_[1] = {"bias", nullptr, PluginFieldType::kFLOAT32, 1};
  fieldCollection_ = {2, fieldInfo_};
}

const char* ScaleBiasCreator::getPluginName() const noexcept { return kScaleBiasName; }
const char* ScaleBiasCreator::getPluginVersion() const noexcept { return kScaleBiasVersion; }
const kiln::PluginFieldCollection* ScaleBiasCreator::getFieldNames() noexcept {
  return &fieldCollection_;
}

kiln::IPlugin* ScaleBiasCreator::createPlugin(const char* layerName,
                                              const kiln::PluginFieldCollection* fields) noexcept {
  try {
    float scale = 1.0f, bias = 0.0f;
    bool haveScale = false, haveBias = false;
    const int32_t n = fields ? fields->nbFields : 0;
    if (n < 0 || (n > 0 && !fields->fields)) {
      setError(layerName, "malformed field collection");
      return nullptr;
    }
    for (int32_t i = 0; i < n; ++i) {
      const PluginField& f = fields->fields[i];
      if (!f.name) {
        setError(layerName, "field " + std::to_string(i) + " has no name");
        return nullptr;
      }
      std::string error;
      bool* seen = nullptr;
      float* target = nullptr;
      if (std::strcmp(f.name, "scale") == 0) {
        seen = &haveScale;
        target = &scale;
      } else if (std::strcmp(f.name, "bias") == 0) {
        seen = &haveBias;
        target = &bias;
      } else {
        setError(layerName, std::string("unknown field '") + f.name + "' (expected scale, bias)");
        return nullptr;
      }
      if (*seen) {
        setError(layerName, std::string("field '") + f.name + "' given twice");
        return nullptr;
      }
      *seen = true;
      if (!readFloatField(f, *target, error)) {
        setError(layerName, error);
        return nullptr;
      }
    }
    return new ScaleBiasPlugin(scale, bias);
  } catch (...) {
    setError(layerName, "out of memory");
    return nullptr;
  }
}

kiln::IPlugin* ScaleBiasCreator::deserializePlugin(const char* layerName, const void* data,
                                                   size_t length) noexcept {
  try {
    std::string error;
    ScaleBiasPlugin* p = ScaleBiasPlugin::deserialize(data, length, error);
    if (!p) setError(layerName, error);
    return p;
  } catch (...) {
    setError(layerName, "out of memory");
    return nullptr;
  }
}

const char* ScaleBiasCreator::getLastError() const noexcept {
  const std::string& e = lastError();
  return e.empty() ? nullptr : e.c_str();
}

}  // namespace kiln_example
