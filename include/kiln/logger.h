// kiln routes every diagnostic through one user-replaceable logger.
#pragma once

namespace kiln {

enum class Severity : int { kError = 0, kWarning = 1, kInfo = 2, kVerbose = 3 };

class ILogger {
 public:
  virtual ~ILogger() = default;
  // May be called from several threads at once; implementations must be thread-safe.
  virtual void log(Severity severity, const char* message) noexcept = 0;
};

// The default logger writes warnings and errors to standard error. setLogger(nullptr) restores
// it. The logger must outlive every kiln call made after setting it.
void setLogger(ILogger* logger);
ILogger& getLogger();
// Messages above this severity are dropped before they reach the logger (default kWarning).
void setLogSeverity(Severity maxSeverity);
Severity getLogSeverity();

}  // namespace kiln
