#include "kiln/status.h"

#include <iterator>

#include "core/enum_names.h"

namespace kiln {

const char* statusCodeName(StatusCode code) {
  static constexpr const char* kNames[] = {"ok",          "invalid argument", "not found",
                                           "unsupported", "corrupt data",     "plugin failure",
                                           "i/o error",   "internal error",   "device error",
                                           "cancelled"};
  static_assert(std::size(kNames) == static_cast<size_t>(StatusCode::kCancelled) + 1);
  return enumName(code, kNames, "unknown");
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

Status Status::withContext(const std::string& context) const {
  if (isOk()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace kiln
