// The elements of an INT32 or INT64 buffer as int64: shape-value inputs (the runtime's check, the
// command line's and the conformance runner's values) read and write them through these.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/types.h"

namespace kiln {

// Element k of `data` (kINT32 or kINT64, as `type` says).
inline int64_t integerAt(const void* data, DataType type, size_t k) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (type == DataType::kINT32) {
    int32_t v;
    std::memcpy(&v, bytes + 4 * k, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, bytes + 8 * k, 8);
  return v;
}

inline void setIntegerAt(void* data, DataType type, size_t k, int64_t value) {
  auto* bytes = static_cast<uint8_t*>(data);
  if (type == DataType::kINT32) {
    const int32_t v = static_cast<int32_t>(value);
    std::memcpy(bytes + 4 * k, &v, 4);
  } else {
    std::memcpy(bytes + 8 * k, &value, 8);
  }
}

// The `count` elements of `data`.
inline std::vector<int64_t> integerValues(const void* data, DataType type, size_t count) {
  std::vector<int64_t> values(count);
  for (size_t k = 0; k < count; ++k) values[k] = integerAt(data, type, k);
  return values;
}

}  // namespace kiln
