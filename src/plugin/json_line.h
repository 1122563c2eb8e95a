// A tiny reader and writer for the one shape of JSON the lifecycle trace uses: one flat object
// per line whose values are strings, integers or null. Anything else (nesting, arrays, floats,
// booleans) is refused with an error that says what was found and at which column, so a corrupt
// or foreign trace is reported instead of half-read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"  // appendJsonString, for the writers of trace lines
#include "kiln/status.h"

namespace kiln {

struct JsonValue {
  enum class Kind { kString, kInteger, kNull };
  Kind kind = Kind::kNull;
  std::string string;   // kString only
  int64_t integer = 0;  // kInteger only
};

// Members in the order they appear in the line; keys are unique.
struct JsonObject {
  std::vector<std::pair<std::string, JsonValue>> members;

  // nullptr when the key is absent.
  const JsonValue* find(std::string_view key) const;
};

// Parses one line holding exactly one flat object (surrounding whitespace allowed). Errors are
// kInvalidArgument with a message like "column 17: expected ':' after key \"seq\"".
Status parseJsonLine(std::string_view line, JsonObject& out);

}  // namespace kiln
