// Internal logging helpers: skip formatting when the message would be dropped anyway.
#pragma once

#include <string>

#include "kiln/logger.h"

namespace kiln {

inline bool logEnabled(Severity severity) {
  return static_cast<int>(severity) <= static_cast<int>(getLogSeverity());
}
inline void logMessage(Severity severity, const std::string& message) {
  if (logEnabled(severity)) getLogger().log(severity, message.c_str());
}

}  // namespace kiln
