// The fields of a CropAndResize plugin (DESIGN.md §5) and their parsing from a field collection.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/plugin.h"

namespace kiln::plugins {

inline constexpr const char* kCropAndResizeName = "CropAndResize";
inline constexpr const char* kCropAndResizeVersion = "1";

enum class ResizeMethod : int32_t { kBILINEAR = 0, kNEAREST = 1 };

struct CropAndResizeFields {
  int32_t cropHeight = 0;
  int32_t cropWidth = 0;
  ResizeMethod method = ResizeMethod::kBILINEAR;
  // The float's bits, so that a NaN payload survives serialize -> deserialize -> serialize.
  uint32_t extrapolationBits = 0;

  float extrapolationValue() const;
};

// Fills `out` from `fields`. On failure returns false and says in `error` which field is wrong
// and why; `out` is then unspecified.
bool parseCropAndResizeFields(const PluginFieldCollection* fields, CropAndResizeFields& out,
                              std::string& error);

// What getFieldNames() reports. crop_height and crop_width are listed as int32 but int64 is
// accepted too (values must fit int32); extrapolation_value is listed as float32 and float64 is
// accepted too.
const PluginFieldCollection* cropAndResizeFieldNames();

}  // namespace kiln::plugins
