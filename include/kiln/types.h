// Basic value types shared by every part of kiln's public API, including the plugin ABI.
// Everything here is a fixed-layout type (no STL) so that it can cross a shared-library boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace kiln {

// Element types. The numeric values are part of the plan format and the plugin ABI: never reorder.
enum class DataType : int32_t {
  kFLOAT = 0,  // IEEE float32
  kHALF = 1,   // IEEE float16
  kBF16 = 2,   // bfloat16
  kINT8 = 3,
  kINT32 = 4,
  kINT64 = 5,
  kBOOL = 6,  // one byte, 0 or 1
};
constexpr int32_t kDataTypeCount = 7;
constexpr int32_t enumCount(DataType) { return kDataTypeCount; }
// FP32, FP16 or BF16.
constexpr bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16;
}

// Which corner of an optimization profile's box (kiln/builder.h OptimizationProfile): the
// smallest shape an input may take, the one the builder times tactics at, the largest.
enum class OptProfileSelector : int32_t { kMIN = 0, kOPT = 1, kMAX = 2 };

// Memory layouts. Dims are always logical (N, C, H, W, ...); the format says how they are laid
// out in memory. Values are part of the plan format and the plugin ABI.
enum class TensorFormat : int32_t {
  kLINEAR = 0,         // row-major over the logical dims (NCHW for 4-D)
  kCHANNELS_LAST = 1,  // NHWC for 4-D tensors (only valid for rank 4)
};
constexpr int32_t kTensorFormatCount = 2;
constexpr int32_t enumCount(TensorFormat) { return kTensorFormatCount; }

// Where a tensor's memory lives when a plugin or kernel sees it.
enum class DeviceKind : int32_t {
  kCPU = 0,
  kCUDA = 1,
};

// A stream handle: nullptr on the CPU backend, a cudaStream_t on the CUDA backend.
using Stream = void*;

struct Dims {
  static constexpr int32_t kMaxDims = 8;
  int32_t nbDims = 0;
  int64_t d[kMaxDims] = {};
};

// A tensor as a kernel or plugin sees it: shape, element type, memory format and location.
struct PluginTensorDesc {
  Dims dims;
  DataType type = DataType::kFLOAT;
  TensorFormat format = TensorFormat::kLINEAR;
  DeviceKind device = DeviceKind::kCPU;
};

// Size in bytes of one element, or 0 for an invalid value.
size_t dataTypeSize(DataType type);
// Stable lowercase names ("fp32", "fp16", "bf16", "int8", "int32", "int64", "bool").
const char* dataTypeName(DataType type);
// "linear" or "channels_last".
const char* formatName(TensorFormat format);
// Element `index` of packed `data` of type `type`, as a double (exact for every type but int64
// beyond 2^53), and the reverse: `value` stored as a cast to `type` would (floats rounded to
// nearest, integers truncated toward zero and saturated, NaN as 0; bool is value != 0).
double readElement(const void* data, DataType type, int64_t index);
void writeElement(void* data, DataType type, int64_t index, double value);
// Product of the dims (1 for rank 0); -1 if any dim is negative or the product overflows.
int64_t volume(const Dims& dims);

// Dims from a list, for convenience in C++ code: makeDims({1, 3, 224, 224}). More than kMaxDims
// values give nbDims == -1, which every API call rejects.
inline Dims makeDims(std::initializer_list<int64_t> values) {
  Dims dims;
  if (values.size() > static_cast<size_t>(Dims::kMaxDims)) {
    dims.nbDims = -1;
    return dims;
  }
  for (int64_t v : values) dims.d[dims.nbDims++] = v;
  return dims;
}
inline bool operator==(const Dims& a, const Dims& b) {
  if (a.nbDims != b.nbDims) return false;
  for (int32_t i = 0; i < a.nbDims; ++i)
    if (a.d[i] != b.d[i]) return false;
  return true;
}
inline bool operator!=(const Dims& a, const Dims& b) { return !(a == b); }

// Weights passed to the network API: the network copies them, the caller keeps ownership.
struct Weights {
  DataType type = DataType::kFLOAT;
  const void* values = nullptr;
  int64_t count = 0;
};

}  // namespace kiln
