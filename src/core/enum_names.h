// Names of enum values from a table indexed by the value, for enums numbered 0, 1, 2, ...: one
// line per value instead of a case and a return, and a static_assert beside the table keeps it
// as long as the enum.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// names[value], or `fallback` for a value outside the table.
template <class E, size_t N>
constexpr const char* enumName(E value, const char* const (&names)[N], const char* fallback) {
  const auto i = static_cast<int64_t>(value);
  return i >= 0 && i < static_cast<int64_t>(N) ? names[i] : fallback;
}

}  // namespace kiln
