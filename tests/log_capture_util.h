// Capturing what kiln logs, for tests that read the verbose build log or a warning.
#pragma once

#include <mutex>
#include <string>

#include "kiln/kiln.h"

namespace kiln::testing {

class CapturingLogger final : public ILogger {
 public:
  void log(Severity, const char* message) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += message;
    text_ += '\n';
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

// Installs a capturing logger at kInfo for the scope.
class LogCapture {
 public:
  LogCapture() {
    setLogger(&logger_);
    setLogSeverity(Severity::kInfo);
  }
  ~LogCapture() {
    setLogger(nullptr);
    setLogSeverity(Severity::kWarning);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::string text() { return logger_.text(); }

 private:
  CapturingLogger logger_;
};

}  // namespace kiln::testing
