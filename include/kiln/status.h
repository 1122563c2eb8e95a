// Errors are values: every fallible call in kiln's engine-side API returns a Status.
// (The plugin ABI uses plain int32_t codes instead; see plugin.h.)
#pragma once

#include <string>
#include <utility>

namespace kiln {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument,  // the caller passed something malformed
  kNotFound,         // a named thing (tensor, plugin, file) does not exist
  kUnsupported,      // valid, but kiln cannot do it (yet) on this backend
  kCorruptData,      // a plan file or serialized blob failed validation
  kPluginFailure,    // a plugin call returned a non-success status
  kIoError,          // reading or writing a file failed
  kInternal,         // a broken invariant inside kiln: a bug
  kDeviceError,      // a CUDA, cuBLAS or cuDNN call failed (or no usable GPU)
  kCancelled,        // the caller asked to stop (BuilderConfig::progress returned false)
};

const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "ok".
  std::string toString() const;

  // Prefixes context ("while loading plan 'x'") to the message of a failed status.
  Status withContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status notFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status corruptData(std::string m) { return {StatusCode::kCorruptData, std::move(m)}; }
inline Status pluginFailure(std::string m) { return {StatusCode::kPluginFailure, std::move(m)}; }
inline Status ioError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status internalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status deviceError(std::string m) { return {StatusCode::kDeviceError, std::move(m)}; }
inline Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

}  // namespace kiln

// Returns early from the enclosing function when `expr` yields a failed Status.
#define KILN_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::kiln::Status kiln_status_ = (expr);          \
    if (!kiln_status_.isOk()) return kiln_status_; \
  } while (0)
