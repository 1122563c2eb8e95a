#include "crop_and_resize_serial.h"

#include <cstdint>

#include "kiln/plugin_utils.h"

namespace kiln::plugins {
namespace {

constexpr uint32_t kMagic = 0x3152434bu;  // "KCR1" in memory order
constexpr size_t kSize = 11 * 4;

}  // namespace

size_t cropAndResizeSerializedSize() { return kSize; }

bool writeCropAndResize(const CropAndResizeFields& fields, const CropAndResizeConfig& config,
                        void* buffer, size_t length) {
  if (!buffer || length < kSize) return false;
  // An unconfigured object writes the canonical zeros whatever its config members hold.
  const CropAndResizeConfig c = config.configured() ? config : CropAndResizeConfig();
  BufferWriter w(buffer, length);
  w.write(kMagic);
  w.write(fields.cropHeight);
  w.write(fields.cropWidth);
  w.write(static_cast<int32_t>(fields.method));
  w.write(fields.extrapolationBits);
  w.write(c.nbInputs);
  w.write(static_cast<int32_t>(c.featureType));
  w.write(static_cast<int32_t>(c.featureFormat));
  w.write(static_cast<int32_t>(c.boxesType));
  w.write(static_cast<int32_t>(c.outputFormat));
  w.write(static_cast<int32_t>(c.device));
  return w.ok();
}

bool readCropAndResize(const void* data, size_t length, CropAndResizeFields& fields,
                       CropAndResizeConfig& config, std::string& error) {
  if (!data) {
    error = "no data";
    return false;
  }
  if (length != kSize) {
    error = "serialized data is " + std::to_string(length) + " bytes; expected " +
            std::to_string(kSize);
    return false;
  }
  BufferReader r(data, length);
  uint32_t magic = 0;
  int32_t method = 0, featureType = 0, featureFormat = 0, boxesType = 0, outputFormat = 0,
          device = 0;
  CropAndResizeFields f;
  CropAndResizeConfig c;
  r.read(magic);
  r.read(f.cropHeight);
  r.read(f.cropWidth);
  r.read(method);
  r.read(f.extrapolationBits);
  r.read(c.nbInputs);
  r.read(featureType);
  r.read(featureFormat);
  r.read(boxesType);
  r.read(outputFormat);
  r.read(device);
  if (!r.finished()) {
    error = "serialized data has the wrong length";
    return false;
  }
  if (magic != kMagic) {
    error = "serialized data does not start with the CropAndResize magic (not this plugin's data)";
    return false;
  }
  if (f.cropHeight < 1 || f.cropWidth < 1) {
    error = "serialized crop size " + std::to_string(f.cropHeight) + "x" +
            std::to_string(f.cropWidth) + " is invalid (each must be at least 1)";
    return false;
  }
  if (method != static_cast<int32_t>(ResizeMethod::kBILINEAR) &&
      method != static_cast<int32_t>(ResizeMethod::kNEAREST)) {
    error = "serialized method " + std::to_string(method) + " is invalid";
    return false;
  }
  f.method = static_cast<ResizeMethod>(method);
  if (c.nbInputs == 0) {
    if (featureType || featureFormat || boxesType || outputFormat || device) {
      error = "serialized data of an unconfigured plugin has a non-zero configuration";
      return false;
    }
  } else {
    if (c.nbInputs != 2 && c.nbInputs != 3) {
      error = "serialized input count " + std::to_string(c.nbInputs) + " is invalid";
      return false;
    }
    // Range-check the enums before they are cast, then let the format rules judge them.
    auto inRange = [](int32_t v, int32_t count) { return v >= 0 && v < count; };
    if (!inRange(featureType, kDataTypeCount) || !inRange(boxesType, kDataTypeCount) ||
        !inRange(featureFormat, kTensorFormatCount) || !inRange(outputFormat, kTensorFormatCount) ||
        !inRange(device, 2)) {
      error = "serialized configuration holds an out-of-range type, format or device";
      return false;
    }
    c.featureType = static_cast<DataType>(featureType);
    c.featureFormat = static_cast<TensorFormat>(featureFormat);
    c.boxesType = static_cast<DataType>(boxesType);
    c.outputFormat = static_cast<TensorFormat>(outputFormat);
    c.device = static_cast<DeviceKind>(device);
    PluginTensorDesc descs[4];
    describeCropAndResizeConfig(c, descs);
    const std::string why = checkCropAndResizeConfig(descs, c.nbInputs, 1);
    if (!why.empty()) {
      error = "serialized configuration is invalid: " + why;
      return false;
    }
  }
  fields = f;
  config = c;
  return true;
}

}  // namespace kiln::plugins
