// Writing JSON string literals, for everything kiln writes as JSON (the lifecycle trace,
// `kiln inspect`, the plugin harness's tables).
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// Appends `text` as a JSON string literal (quotes included). Quotes, backslashes and control
// characters are escaped; other bytes, UTF-8 included, are copied as they are.
void appendJsonString(std::string& out, std::string_view text);
// The same, as a new string.
std::string jsonString(std::string_view text);

}  // namespace kiln
