#include "kiln/types.h"

#include <limits>

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
  switch (type) {
    case DataType::kFLOAT:
      return "fp32";
    case DataType::kHALF:
      return "fp16";
    case DataType::kBF16:
      return "bf16";
    case DataType::kINT8:
      return "int8";
    case DataType::kINT32:
      return "int32";
    case DataType::kINT64:
      return "int64";
    case DataType::kBOOL:
      return "bool";
  }
  return "invalid";
}

const char* formatName(TensorFormat format) {
  switch (format) {
    case TensorFormat::kLINEAR:
      return "linear";
    case TensorFormat::kCHANNELS_LAST:
      return "channels_last";
  }
  return "invalid";
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
  switch (type) {
    case PluginFieldType::kFLOAT32:
      return "float32";
    case PluginFieldType::kFLOAT64:
      return "float64";
    case PluginFieldType::kINT8:
      return "int8";
    case PluginFieldType::kINT16:
      return "int16";
    case PluginFieldType::kINT32:
      return "int32";
    case PluginFieldType::kINT64:
      return "int64";
    case PluginFieldType::kSTRING:
      return "string";
    case PluginFieldType::kDIMS:
      return "dims";
  }
  return "invalid";
}

}  // namespace kiln
