#include "crop_and_resize_fields.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kiln/plugin_utils.h"

namespace kiln::plugins {
namespace {

constexpr const char* kCropHeight = "crop_height";
constexpr const char* kCropWidth = "crop_width";
constexpr const char* kMethod = "method";
constexpr const char* kExtrapolationValue = "extrapolation_value";

std::string quoted(const char* name) { return std::string("field '") + name + "'"; }

// Checks that a numeric field holds exactly one value with readable data.
bool checkScalar(const PluginField& f, std::string& error) {
  if (f.length != 1) {
    error = quoted(f.name) + " must hold exactly 1 value, got " + std::to_string(f.length);
    return false;
  }
  if (!f.data) {
    error = quoted(f.name) + " has no data";
    return false;
  }
  return true;
}

bool parseCropSize(const PluginField& f, int32_t& out, std::string& error) {
  int64_t value = 0;
  if (f.type == PluginFieldType::kINT32) {
    if (!checkScalar(f, error)) return false;
    int32_t v;
    std::memcpy(&v, f.data, sizeof v);
    value = v;
  } else if (f.type == PluginFieldType::kINT64) {
    if (!checkScalar(f, error)) return false;
    std::memcpy(&value, f.data, sizeof value);
  } else {
    error =
        quoted(f.name) + " has type " + pluginFieldTypeName(f.type) + "; it must be int32 or int64";
    return false;
  }
  if (value < 1) {
    error = quoted(f.name) + " is " + std::to_string(value) + "; it must be at least 1";
    return false;
  }
  if (value > std::numeric_limits<int32_t>::max()) {
    error = quoted(f.name) + " is " + std::to_string(value) + ", which does not fit int32";
    return false;
  }
  out = static_cast<int32_t>(value);
  return true;
}

bool parseMethod(const PluginField& f, ResizeMethod& out, std::string& error) {
  if (f.type != PluginFieldType::kSTRING) {
    error = quoted(f.name) + " has type " + pluginFieldTypeName(f.type) + "; it must be string";
    return false;
  }
  if (f.length < 0 || (f.length > 0 && !f.data)) {
    error = quoted(f.name) + " is malformed (length " + std::to_string(f.length) +
            (f.data ? "" : ", no data") + ")";
    return false;
  }
  const std::string text = pluginFieldString(f);
  if (text == "bilinear") {
    out = ResizeMethod::kBILINEAR;
  } else if (text == "nearest") {
    out = ResizeMethod::kNEAREST;
  } else {
    error = quoted(f.name) + " is '" + text + "'; it must be 'bilinear' or 'nearest'";
    return false;
  }
  return true;
}

bool parseExtrapolation(const PluginField& f, uint32_t& bits, std::string& error) {
  float value = 0.0f;
  if (f.type == PluginFieldType::kFLOAT32) {
    if (!checkScalar(f, error)) return false;
    std::memcpy(&value, f.data, sizeof value);
  } else if (f.type == PluginFieldType::kFLOAT64) {
    if (!checkScalar(f, error)) return false;
    double d;
    std::memcpy(&d, f.data, sizeof d);
    // Rounding to float32 is the op's precision; turning a finite value into infinity is not.
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
      error = quoted(f.name) + " is " + std::to_string(d) + ", which does not fit float32";
      return false;
    }
    value = static_cast<float>(d);
  } else {
    error = quoted(f.name) + " has type " + pluginFieldTypeName(f.type) +
            "; it must be float32 or float64";
    return false;
  }
  std::memcpy(&bits, &value, sizeof bits);
  return true;
}

}  // namespace

float CropAndResizeFields::extrapolationValue() const {
  float v;
  std::memcpy(&v, &extrapolationBits, sizeof v);
  return v;
}

bool parseCropAndResizeFields(const PluginFieldCollection* fields, CropAndResizeFields& out,
                              std::string& error) {
  out = CropAndResizeFields();
  const int32_t n = fields ? fields->nbFields : 0;
  if (n < 0 || (n > 0 && !fields->fields)) {
    error = "the field collection is malformed (nbFields " + std::to_string(n) + ")";
    return false;
  }
  bool seen[4] = {false, false, false, false};
  for (int32_t i = 0; i < n; ++i) {
    const PluginField& f = fields->fields[i];
    if (!f.name) {
      error = "field " + std::to_string(i) + " has no name";
      return false;
    }
    int slot = -1;
    bool ok = false;
    if (std::strcmp(f.name, kCropHeight) == 0) {
      slot = 0;
      ok = parseCropSize(f, out.cropHeight, error);
    } else if (std::strcmp(f.name, kCropWidth) == 0) {
      slot = 1;
      ok = parseCropSize(f, out.cropWidth, error);
    } else if (std::strcmp(f.name, kMethod) == 0) {
      slot = 2;
      ok = parseMethod(f, out.method, error);
    } else if (std::strcmp(f.name, kExtrapolationValue) == 0) {
      slot = 3;
      ok = parseExtrapolation(f, out.extrapolationBits, error);
    } else {
      error = "unknown " + quoted(f.name) +
              " (CropAndResize takes crop_height, crop_width, method, extrapolation_value)";
      return false;
    }
    if (!ok) return false;
    if (seen[slot]) {
      error = quoted(f.name) + " is given twice";
      return false;
    }
    seen[slot] = true;
  }
  if (!seen[0] || !seen[1]) {
    error = std::string("required ") + quoted(seen[0] ? kCropWidth : kCropHeight) + " is missing";
    return false;
  }
  return true;
}

const PluginFieldCollection* cropAndResizeFieldNames() {
  static const PluginField kFields[] = {
      {kCropHeight, nullptr, PluginFieldType::kINT32, 1},
      {kCropWidth, nullptr, PluginFieldType::kINT32, 1},
      {kMethod, nullptr, PluginFieldType::kSTRING, 0},
      {kExtrapolationValue, nullptr, PluginFieldType::kFLOAT32, 1},
  };
  static const PluginFieldCollection kCollection{4, kFields};
  return &kCollection;
}

}  // namespace kiln::plugins
