// A plugin-like library whose only state is a thread_local: its TLS block is malloc'ed at the
// first access from each thread, like the example plugin library's error string.
#include <string>

namespace {
thread_local std::string lastMessage;
}

extern "C" __attribute__((visibility("default"))) const char* kilnProbeTouchTls() {
  lastMessage.assign(200, 'k');  // on the heap: only reachable through the TLS block
  return lastMessage.c_str();
}
