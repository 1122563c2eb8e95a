// The serialized form of a CropAndResize plugin: its fields and its configuration.
//
// Layout (host byte order, which is little-endian on every target kiln builds for):
//   uint32 magic "KCR1" | int32 crop_height | int32 crop_width | int32 method |
//   uint32 extrapolation_value bits | int32 nbInputs (0: not configured) | int32 feature type |
//   int32 feature format | int32 boxes type | int32 output format | int32 device
// An unconfigured object writes zeros for the configuration, and reading accepts nothing else,
// so every accepted byte string is the one its object writes back.
#pragma once

#include <cstddef>
#include <string>

#include "crop_and_resize_config.h"
#include "crop_and_resize_fields.h"

namespace kiln::plugins {

size_t cropAndResizeSerializedSize();

// False if `length` is too small.
bool writeCropAndResize(const CropAndResizeFields& fields, const CropAndResizeConfig& config,
                        void* buffer, size_t length);

// Validates the length and every value; on failure says what is wrong in `error`.
bool readCropAndResize(const void* data, size_t length, CropAndResizeFields& fields,
                       CropAndResizeConfig& config, std::string& error);

}  // namespace kiln::plugins
