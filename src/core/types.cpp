#include "kiln/types.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#include "core/enum_names.h"
#include "kiln/float16.h"
#include "kiln/layers.h"
#include "kiln/plugin.h"

namespace kiln {

size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFLOAT:
    case DataType::kINT32:
      return 4;
    case DataType::kHALF:
    case DataType::kBF16:
      return 2;
    case DataType::kINT8:
    case DataType::kBOOL:
      return 1;
    case DataType::kINT64:
      return 8;
  }
  return 0;
}

const char* dataTypeName(DataType type) {
  static constexpr const char* kNames[] = {"fp32",  "fp16",  "bf16", "int8",
                                           "int32", "int64", "bool"};
  static_assert(std::size(kNames) == kDataTypeCount);
  return enumName(type, kNames, "invalid");
}

const char* formatName(TensorFormat format) {
  static constexpr const char* kNames[] = {"linear", "channels_last"};
  static_assert(std::size(kNames) == kTensorFormatCount);
  return enumName(format, kNames, "invalid");
}

int64_t volume(const Dims& dims) {
  if (dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims) return -1;
  int64_t v = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    const int64_t d = dims.d[i];
    if (d < 0) return -1;
    if (d != 0 && v > std::numeric_limits<int64_t>::max() / d) return -1;
    v *= d;
  }
  return v;
}

namespace {

template <typename T>
T loadAt(const void* data, int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(data) + index * int64_t(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void storeAt(void* data, int64_t index, T v) {
  std::memcpy(static_cast<uint8_t*>(data) + index * int64_t(sizeof(T)), &v, sizeof(T));
}

// Truncated toward zero and saturated to T's range; NaN becomes 0 (a plain cast would be UB).
template <typename T>
T toInteger(double v) {
  if (std::isnan(v)) return 0;
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (v <= lo) return std::numeric_limits<T>::lowest();
  if (v >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

double readElement(const void* data, DataType type, int64_t index) {
  switch (type) {
    case DataType::kFLOAT:
      return loadAt<float>(data, index);
    case DataType::kHALF:
      return halfToFloat(loadAt<uint16_t>(data, index));
    case DataType::kBF16:
      return bf16ToFloat(loadAt<uint16_t>(data, index));
    case DataType::kINT8:
      return loadAt<int8_t>(data, index);
    case DataType::kINT32:
      return loadAt<int32_t>(data, index);
    case DataType::kINT64:
      return static_cast<double>(loadAt<int64_t>(data, index));
    case DataType::kBOOL:
      return loadAt<uint8_t>(data, index) ? 1 : 0;
  }
  return 0;
}

void writeElement(void* data, DataType type, int64_t index, double value) {
  switch (type) {
    case DataType::kFLOAT:
      return storeAt<float>(data, index, static_cast<float>(value));
    case DataType::kHALF:
      return storeAt<uint16_t>(data, index, floatToHalf(static_cast<float>(value)));
    case DataType::kBF16:
      return storeAt<uint16_t>(data, index, floatToBf16(static_cast<float>(value)));
    case DataType::kINT8:
      return storeAt<int8_t>(data, index, toInteger<int8_t>(value));
    case DataType::kINT32:
      return storeAt<int32_t>(data, index, toInteger<int32_t>(value));
    case DataType::kINT64:
      return storeAt<int64_t>(data, index, toInteger<int64_t>(value));
    case DataType::kBOOL:
      return storeAt<uint8_t>(data, index, value != 0 ? 1 : 0);
  }
}

const char* layerTypeName(LayerType type) {
  switch (type) {
    case LayerType::kCONSTANT:
      return "Constant";
    case LayerType::kPLUGIN:
      return "Plugin";
#define KILN_LAYER_TYPE_NAME(ENUM, VALUE, NAME) \
  case LayerType::k##ENUM:                      \
    return #NAME;
      KILN_BUILTIN_OPS(KILN_LAYER_TYPE_NAME)
#undef KILN_LAYER_TYPE_NAME
  }
  return "Invalid";
}

const char* pluginFieldTypeName(PluginFieldType type) {
  static constexpr const char* kNames[] = {"float32", "float64", "int8",   "int16",
                                           "int32",   "int64",   "string", "dims"};
  static_assert(std::size(kNames) == static_cast<size_t>(PluginFieldType::kDIMS) + 1);
  return enumName(type, kNames, "invalid");
}

}  // namespace kiln
