// Reads a lifecycle trace (trace.h) back and proves on it what a trace can show of the nine
// guarantees of DESIGN.md §2 and §7. Used by the lifecycle tests after every flow and by `kiln
// trace`.
//
// What is checked, by guarantee:
//  1 every object made by createPlugin/clone/deserializePlugin (the "result") gets exactly one
//    destroy, its last call; no call on an id nothing made; nothing left alive at the end.
//  2 initialize at most once; terminate iff initialize succeeded, once, before destroy.
//  3 context objects (clones made in phase "context") are never initialized.
//  4 build objects (clones made in phase "build") get a successful configurePlugin before
//    getWorkspaceSize, initialize and enqueue; objects from deserializePlugin and all their
//    clones are never configured.
//  5 context objects enqueue only between a successful attachToContext and detachFromContext;
//    no object is attached twice, detached unattached, or destroyed (or left) attached.
//  6 every deserialized object passes the round trip (a serialize with status 0 in phase
//    "deserialize") before it is cloned; a failed round-trip serialize is flagged.
//  7 the first call on an object a creator made is setPluginNamespace, with the namespace of the
//    creator call that made it; every later event on an object carries that namespace, and a
//    clone carries its source's.
//  8 a violation of 1 or 2 on an object that was alive when some call failed (any phase; a failed
//    call on the object itself is preferred) is reported a second time as guarantee 8, naming
//    that failed call: the failure path broke the pairing. The checks of 1 and 2 make no
//    exception for failure paths.
//  9 only context objects get onShapeChange, while attached, never twice in a row with the same
//    shapes, and with shapes inside the min/max the line carries; a context object's enqueue
//    comes after a successful onShapeChange (none failed since) with the shapes it is enqueued
//    with.
// Not visible in a trace, so not checked: byte equality itself (the engine compares and reports
// it as the round-trip serialize's status), one thread at a time per context object, and the
// sharing of initialize()'s resources between an engine object and its clones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/status.h"
#include "plugin/trace.h"

namespace kiln {

// One parsed trace line.
struct TraceRecord {
  int64_t seq = 0;
  TracePhase phase = TracePhase::kParse;
  std::string plugin;
  std::string version;
  std::string ns;
  std::string layer;
  std::string call;
  int64_t object = -1;  // -1: null (a creator call)
  int64_t result = -1;  // -1: absent
  int32_t status = 0;
  int64_t thread = 0;
  // onShapeChange and enqueue: the tensors' shapes ("" when the line has none); onShapeChange:
  // the profile's range too (trace.h, TraceShapes).
  std::string shapes;
  std::string min;
  std::string max;
};

// Parses one line. Unknown keys are ignored (so the format can grow); missing or mistyped keys,
// an unknown phase and ids below 1 are errors.
Status parseTraceRecord(std::string_view line, TraceRecord& record);

// Parses a whole trace; blank lines are skipped. Errors name the 1-based line number. seq must
// grow strictly from line to line (it does in anything one Tracer wrote).
Status parseTrace(const std::vector<std::string>& lines, std::vector<TraceRecord>& records);

// Reads a trace file into lines.
Status readTraceFile(const std::string& path, std::vector<std::string>& lines);

struct TraceViolation {
  int64_t seq = 0;    // the event where it shows (for leaks: the event that made the object)
  int guarantee = 0;  // 1..9, as numbered in DESIGN.md §2 and §7
  std::string message;
};

// "seq 12: guarantee 4: ..."
std::string formatTraceViolation(const TraceViolation& violation);

// Checks parsed records; violations come out ordered by seq.
std::vector<TraceViolation> checkTraceRecords(const std::vector<TraceRecord>& records);

// Parses and checks. A parse error is returned as the status (and `violations` is left empty).
Status checkTrace(const std::vector<std::string>& lines, std::vector<TraceViolation>& violations);
Status checkTraceFile(const std::string& path, std::vector<TraceViolation>& violations);

}  // namespace kiln
