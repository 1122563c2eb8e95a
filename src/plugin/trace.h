// The lifecycle trace (DESIGN.md §2 "Trace"): one JSON line per creator and plugin call the
// engine makes, so that the checker (trace_checker.h) can prove guarantees 1-8 afterwards.
//
// The engine writes an event around every call; plugins do nothing to be traced. Lines are
// flushed one by one so that a trace survives a crash of the traced process.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

enum class TracePhase { kParse, kBuild, kSerialize, kDeserialize, kContext, kInfer, kTeardown };

// "parse", "build", ... as written in the trace.
const char* tracePhaseName(TracePhase phase);
// The inverse of tracePhaseName; false for an unknown name.
bool parseTracePhase(std::string_view name, TracePhase& phase);

// The tensor shapes of an onShapeChange or enqueue call as text, inputs then outputs after a ';'
// ("2x3x8x8,5x4,5;5x3x7x7", a rank-0 tensor as "[]"); for onShapeChange also the profile's min
// and max of each tensor in the same form.
struct TraceShapes {
  std::string shapes;
  std::string min;
  std::string max;
};
// `dims`: nbInputs then nbOutputs entries.
std::string traceShapesText(const Dims* dims, int32_t nbInputs, int32_t nbOutputs);
// The inverse: false when `text` is not of that form.
bool parseTraceShapes(std::string_view text, std::vector<Dims>& inputs, std::vector<Dims>& outputs);

struct TraceEvent {
  TracePhase phase = TracePhase::kParse;
  const char* plugin = "";  // plugin name; nullptr is written as ""
  const char* version = "";
  const char* ns = "";  // the namespace of the object (for creator calls: of the creator)
  const char* layer = "";
  const char* call = "";  // the method name exactly as in plugin.h
  int64_t object = -1;    // the object called; -1 for creator calls (written as null)
  int64_t result = -1;    // the object made by createPlugin/deserializePlugin/clone; -1: none
  int32_t status = 0;     // 0 for success
  // onShapeChange and enqueue: "shapes"; onShapeChange: "min" and "max" too (nullptr: absent).
  const TraceShapes* shapes = nullptr;
};

// One trace line, without the newline, in the fixed key order of DESIGN.md §2:
// {"seq":12,"phase":"build",...,"status":0,"thread":1}; shapes, when given, go before "thread".
std::string formatTraceEvent(const TraceEvent& event, int64_t seq, int64_t thread);

class Tracer {
 public:
  // The process-wide tracer the engine writes to. Never destroyed, so that objects released by
  // static destructors can still be traced.
  static Tracer& instance();

  // A private tracer (tests); it reads KILN_TRACE at first use exactly like the global one.
  Tracer() = default;
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // "" turns tracing off; "-" writes to standard error; any other path is opened (truncated).
  // Overrides KILN_TRACE. Each new destination starts again at seq 1 and thread 1. When the file
  // cannot be opened, tracing is off afterwards and the error names the path.
  Status setPath(const std::string& path);

  // Cheap after the first call (one atomic load); the first call reads KILN_TRACE.
  bool enabled() {
    int state = state_.load(std::memory_order_acquire);
    if (state == kUnconfigured) state = configureFromEnvironment();
    return state == kOn;
  }

  // Writes one line for `event` when tracing is on. Thread-safe; seq numbers follow the order
  // lines reach the file.
  void write(const TraceEvent& event);
  void flush();

  // A process-unique id for a new plugin object, counting from 1 (shared by all tracers, so ids
  // stay unique across trace files).
  static int64_t newObjectId();

 private:
  enum : int { kUnconfigured = 0, kOff = 1, kOn = 2 };

  int configureFromEnvironment();
  // Call with mu_ held.
  Status openLocked(const std::string& path);
  void closeLocked();

  std::atomic<int> state_{kUnconfigured};
  std::mutex mu_;
  FILE* file_ = nullptr;
  bool ownsFile_ = false;
  int64_t seq_ = 0;
  std::unordered_map<std::thread::id, int64_t> threads_;
};

}  // namespace kiln
