#include "kiln/logger.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace kiln {
namespace {

class StderrLogger final : public ILogger {
 public:
  void log(Severity severity, const char* message) noexcept override {
    static const char* const kNames[] = {"error", "warning", "info", "verbose"};
    const int s = static_cast<int>(severity);
    std::lock_guard<std::mutex> lock(mutex_);
    std::fprintf(stderr, "kiln %s: %s\n", (s >= 0 && s < 4) ? kNames[s] : "log", message);
  }

 private:
  std::mutex mutex_;
};

StderrLogger& defaultLogger() {
  static StderrLogger logger;
  return logger;
}

std::atomic<ILogger*> gLogger{nullptr};
std::atomic<int> gSeverity{static_cast<int>(Severity::kWarning)};

// What getLogger() hands out: drops messages above the configured severity, so that every caller
// (plugins included) obeys setLogSeverity() without checking it.
class FilteringLogger final : public ILogger {
 public:
  void log(Severity severity, const char* message) noexcept override {
    if (static_cast<int>(severity) > gSeverity.load()) return;
    ILogger* logger = gLogger.load();
    (logger ? *logger : static_cast<ILogger&>(defaultLogger()))
        .log(severity, message ? message : "");
  }
};

}  // namespace

void setLogger(ILogger* logger) { gLogger.store(logger); }

ILogger& getLogger() {
  static FilteringLogger filter;
  return filter;
}

void setLogSeverity(Severity maxSeverity) { gSeverity.store(static_cast<int>(maxSeverity)); }
Severity getLogSeverity() { return static_cast<Severity>(gSeverity.load()); }

}  // namespace kiln
