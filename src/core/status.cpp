#include "kiln/status.h"

namespace kiln {

const char* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kCorruptData:
      return "corrupt data";
    case StatusCode::kPluginFailure:
      return "plugin failure";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kDeviceError:
      return "device error";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
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
