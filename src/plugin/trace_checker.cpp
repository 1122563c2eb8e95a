#include "plugin/trace_checker.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>

#include "plugin/json_line.h"

namespace kiln {

namespace {

bool isCreatingCall(std::string_view call) {
  return call == "createPlugin" || call == "deserializePlugin" || call == "clone";
}

// Methods of IPluginCreator, the only calls traced with "object": null.
bool isCreatorMethod(std::string_view call) {
  return call == "createPlugin" || call == "deserializePlugin" || call == "getFieldNames" ||
         call == "getPluginName" || call == "getPluginVersion" || call == "getLastError";
}

Status getString(const JsonObject& obj, const char* key, std::string& out) {
  const JsonValue* v = obj.find(key);
  if (v == nullptr) return invalidArgument(std::string("missing key \"") + key + "\"");
  if (v->kind != JsonValue::Kind::kString) {
    return invalidArgument(std::string("\"") + key + "\" must be a string");
  }
  out = v->string;
  return Status::ok();
}

// An integer in [min, max]; with allowNull, null (or, with allowAbsent, no key) gives -1.
Status getInteger(const JsonObject& obj, const char* key, int64_t min, int64_t max, bool allowNull,
                  bool allowAbsent, int64_t& out) {
  const JsonValue* v = obj.find(key);
  if (v == nullptr) {
    if (allowAbsent) {
      out = -1;
      return Status::ok();
    }
    return invalidArgument(std::string("missing key \"") + key + "\"");
  }
  if (v->kind == JsonValue::Kind::kNull && allowNull) {
    out = -1;
    return Status::ok();
  }
  if (v->kind != JsonValue::Kind::kInteger) {
    return invalidArgument(std::string("\"") + key + "\" must be an integer" +
                           (allowNull ? " or null" : ""));
  }
  if (v->integer < min || v->integer > max) {
    return invalidArgument(std::string("\"") + key + "\" is " + std::to_string(v->integer) +
                           ", outside [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  out = v->integer;
  return Status::ok();
}

// ---- the checker --------------------------------------------------------------------------------

enum class Origin { kCreate, kDeserialize, kClone };

struct ObjectState {
  int64_t id = 0;
  std::string plugin;
  std::string layer;
  Origin origin = Origin::kCreate;
  TracePhase madePhase = TracePhase::kParse;
  int64_t madeSeq = 0;
  int64_t source = -1;  // clones: the object cloned
  std::string ns;       // the namespace every event on it must carry
  bool isBuild = false;
  bool isContext = false;
  bool fromDeserialize = false;  // made by deserializePlugin, or a clone of one
  bool called = false;
  int64_t lastSeq = 0;
  std::string lastCall;
  bool destroyed = false;
  int64_t destroySeq = 0;
  int initCount = 0;
  int64_t initSeq = 0;
  int32_t initStatus = 0;
  bool initOk = false;
  int terminateCount = 0;
  int64_t terminateSeq = 0;
  bool configured = false;
  bool attached = false;
  int64_t attachSeq = 0;
  bool roundTripped = false;
  bool heard = false;  // a successful onShapeChange, and none failed since
  std::string heardShapes;
  int64_t heardSeq = 0;
};

struct Failure {
  int64_t seq;
  int64_t object;  // -1 for creator calls
  std::string what;
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class Checker {
 public:
  std::vector<TraceViolation> run(const std::vector<TraceRecord>& records) {
    for (const TraceRecord& e : records) {
      if (e.status != 0) recordFailure(e);
      if (e.object < 0) {
        onCreatorCall(e);
      } else {
        onPluginCall(e);
      }
    }
    finish();
    std::stable_sort(
        out_.begin(), out_.end(),
        [](const TraceViolation& a, const TraceViolation& b) { return a.seq < b.seq; });
    return std::move(out_);
  }

 private:
  static std::string describe(const ObjectState& o) {
    std::string s = o.plugin + "#" + std::to_string(o.id) + " (layer " + quoted(o.layer) + ", ";
    switch (o.origin) {
      case Origin::kCreate:
        s += "made by createPlugin";
        break;
      case Origin::kDeserialize:
        s += "made by deserializePlugin";
        break;
      case Origin::kClone:
        s += std::string(o.isContext ? "context object"
                         : o.isBuild ? "build object"
                                     : "object") +
             " cloned from #" + std::to_string(o.source);
        break;
    }
    return s + " at seq " + std::to_string(o.madeSeq) + ")";
  }

  void recordFailure(const TraceRecord& e) {
    std::string what = e.object < 0 ? e.plugin + " creator's " + e.call
                                    : e.call + " on " + e.plugin + "#" + std::to_string(e.object);
    what += " (status " + std::to_string(e.status) + ", phase " + tracePhaseName(e.phase) + ")";
    failures_.push_back({e.seq, e.object, std::move(what)});
  }

  // Reports once per (object, guarantee, key). Violations of 1 and 2 on an object that was alive
  // when some call failed are also reported as guarantee 8, naming that failure.
  void flag(const ObjectState* o, int64_t seq, int guarantee, const std::string& key,
            const std::string& message, int64_t failuresUpTo) {
    int64_t id = o != nullptr ? o->id : 0;
    if (!reported_.emplace(id, guarantee, key).second) return;
    out_.push_back({seq, guarantee, message});
    if (o == nullptr || (guarantee != 1 && guarantee != 2)) return;
    const Failure* chosen = nullptr;
    for (const Failure& f : failures_) {
      if (f.seq < o->madeSeq || f.seq > failuresUpTo) continue;
      if (f.object == o->id) {
        chosen = &f;
        break;
      }
      if (chosen == nullptr) chosen = &f;
    }
    if (chosen != nullptr) {
      out_.push_back({seq, 8,
                      o->plugin + "#" + std::to_string(o->id) + ": on the failure path after " +
                          chosen->what + " at seq " + std::to_string(chosen->seq) + ", guarantee " +
                          std::to_string(guarantee) + " broke (see its " + "violation at seq " +
                          std::to_string(seq) +
                          "); expected a failing call to leave every object destroyed exactly " +
                          "once and terminate paired with a successful initialize"});
    }
  }
  void flag(const ObjectState* o, int64_t seq, int guarantee, const std::string& key,
            const std::string& message) {
    flag(o, seq, guarantee, key, message, seq);
  }

  void makeObject(const TraceRecord& e, Origin origin, const ObjectState* source) {
    auto found = objects_.find(e.result);
    if (found != objects_.end()) {
      flag(nullptr, e.seq, 1, "reuse" + std::to_string(e.seq),
           e.call + " at seq " + std::to_string(e.seq) + " returned object id " +
               std::to_string(e.result) + ", already used by " + describe(found->second) +
               "; expected a new, process-unique id");
    }
    ObjectState o;
    o.id = e.result;
    o.plugin = e.plugin;
    o.layer = e.layer;
    o.origin = origin;
    o.madePhase = e.phase;
    o.madeSeq = e.seq;
    o.lastSeq = e.seq;
    o.lastCall = "(made by " + e.call + ")";
    o.ns = e.ns;
    if (origin == Origin::kClone) {
      o.source = e.object;
      o.isBuild = e.phase == TracePhase::kBuild;
      o.isContext = e.phase == TracePhase::kContext;
      if (source != nullptr) {
        o.ns = source->ns;
        o.fromDeserialize = source->fromDeserialize;
        o.configured = source->configured;  // a clone carries its source's configuration
      }
    } else {
      o.fromDeserialize = origin == Origin::kDeserialize;
    }
    objects_[e.result] = std::move(o);
  }

  void onCreatorCall(const TraceRecord& e) {
    if (e.call != "createPlugin" && e.call != "deserializePlugin") return;
    if (e.result >= 0) {
      makeObject(e, e.call == "createPlugin" ? Origin::kCreate : Origin::kDeserialize, nullptr);
    } else if (e.status == 0) {
      flag(nullptr, e.seq, 1, "noresult" + std::to_string(e.seq),
           e.plugin + " creator's " + e.call + " at seq " + std::to_string(e.seq) +
               " succeeded but names no result object; expected the id of the object it made");
    }
  }

  void onPluginCall(const TraceRecord& e) {
    auto it = objects_.find(e.object);
    if (it == objects_.end()) {
      flag(nullptr, e.seq, 1, "unknown" + std::to_string(e.object),
           e.call + " at seq " + std::to_string(e.seq) + " on " + e.plugin + "#" +
               std::to_string(e.object) +
               ", an id that no createPlugin, clone or deserializePlugin returned");
      if (e.call == "clone" && e.result >= 0) makeObject(e, Origin::kClone, nullptr);
      return;
    }
    ObjectState& o = it->second;
    const std::string at = e.call + " at seq " + std::to_string(e.seq);

    if (o.destroyed) {
      if (e.call == "destroy") {
        flag(&o, e.seq, 1, "destroy-twice",
             describe(o) + ": " + at + " is a second destroy (first at seq " +
                 std::to_string(o.destroySeq) + "); expected exactly one");
      } else {
        flag(&o, e.seq, 1, "after-destroy-" + e.call,
             describe(o) + ": " + at + " after its destroy at seq " + std::to_string(o.destroySeq) +
                 "; expected destroy to be the last call");
      }
      // A clone made from a dead object still exists and is tracked from here on.
      if (e.call == "clone" && e.result >= 0) makeObject(e, Origin::kClone, &o);
      return;
    }

    // Guarantee 7: namespace first, and always the one the object was made with.
    if (!o.called && o.origin != Origin::kClone && e.call != "setPluginNamespace") {
      flag(&o, e.seq, 7, "first",
           describe(o) + ": first call is " + at + "; expected setPluginNamespace(" + quoted(o.ns) +
               ") before any other call");
    }
    if (e.ns != o.ns) {
      std::string expected =
          o.origin == Origin::kClone
              ? "its source #" + std::to_string(o.source) + "'s namespace " + quoted(o.ns)
              : "the namespace of the creator that made it, " + quoted(o.ns);
      flag(&o, e.seq, 7, "ns",
           describe(o) + ": " + at + " carries namespace " + quoted(e.ns) + "; expected " +
               expected);
    }
    o.called = true;
    o.lastSeq = e.seq;
    o.lastCall = e.call;

    if (e.call == "clone") {
      onClone(o, e, at);
    } else if (e.call == "serialize") {
      onSerialize(o, e, at);
    } else if (e.call == "configurePlugin") {
      if (o.fromDeserialize) {
        flag(&o, e.seq, 4, "configure",
             describe(o) + ": " + at + ", but objects from deserializePlugin and their clones " +
                 "are never configured; expected the configuration to come from serialize()");
      } else if (e.status == 0) {
        o.configured = true;
      }
    } else if (e.call == "getWorkspaceSize" || e.call == "initialize" || e.call == "enqueue") {
      if (o.isBuild && !o.configured) {
        flag(&o, e.seq, 4, "unconfigured-" + e.call,
             describe(o) + ": " + at + " on a build object before any successful " +
                 "configurePlugin; expected configurePlugin first");
      }
      if (e.call == "initialize") onInitialize(o, e, at);
      if (e.call == "enqueue" && o.isContext && !o.attached) {
        flag(&o, e.seq, 5, "enqueue-unattached",
             describe(o) + ": " + at + " while not attached; expected enqueue only between " +
                 "a successful attachToContext and detachFromContext");
      }
      if (e.call == "enqueue" && o.isContext) checkHeard(o, e, at);
    } else if (e.call == "onShapeChange") {
      onShapeChange(o, e, at);
    } else if (e.call == "terminate") {
      onTerminate(o, e, at);
    } else if (e.call == "attachToContext") {
      if (o.attached) {
        flag(&o, e.seq, 5, "reattach",
             describe(o) + ": " + at + " while still attached since seq " +
                 std::to_string(o.attachSeq) + "; expected detachFromContext first");
      }
      if (e.status == 0) {
        o.attached = true;
        o.attachSeq = e.seq;
      }
    } else if (e.call == "detachFromContext") {
      if (!o.attached) {
        flag(&o, e.seq, 5, "detach-unattached",
             describe(o) + ": " + at + " without a successful attachToContext before it");
      }
      o.attached = false;  // even a failed detach ends the attachment
    } else if (e.call == "destroy") {
      onDestroy(o, e, at);
    }
  }

  void onClone(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (o.origin == Origin::kDeserialize && !o.roundTripped) {
      flag(&o, e.seq, 6, "clone-before-roundtrip",
           describe(o) + ": " + at + " before a successful round-trip serialize in phase " +
               "deserialize; expected serialize() to give back the bytes it was made from first");
    }
    if (e.result >= 0) {
      makeObject(e, Origin::kClone, &o);
    } else if (e.status == 0) {
      flag(&o, e.seq, 1, "clone-noresult",
           describe(o) + ": " + at + " succeeded but names no result object; expected the " +
               "id of the clone");
    }
  }

  void onSerialize(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (o.origin != Origin::kDeserialize || e.phase != TracePhase::kDeserialize) return;
    if (e.status == 0) {
      o.roundTripped = true;
      return;
    }
    flag(&o, e.seq, 6, "roundtrip-" + std::to_string(e.seq),
         describe(o) + ": round-trip " + at + " failed with status " + std::to_string(e.status) +
             "; expected serialize() to return exactly the bytes deserializePlugin was given");
  }

  // Guarantee 9: the shapes a context object enqueues with are the ones it last heard.
  void checkHeard(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (!o.heard) {
      flag(&o, e.seq, 9, "unheard-" + std::to_string(e.seq),
           describe(o) + ": " + at + " without a successful onShapeChange before it (or after " +
               "its last failed one); expected the concrete shapes first");
    } else if (!e.shapes.empty() && !o.heardShapes.empty() && e.shapes != o.heardShapes) {
      flag(&o, e.seq, 9, "stale-" + std::to_string(e.seq),
           describe(o) + ": " + at + " with shapes " + e.shapes + ", but its last onShapeChange" +
               " (seq " + std::to_string(o.heardSeq) + ") gave " + o.heardShapes +
               "; expected onShapeChange with the new shapes first");
    }
  }

  static bool within(const std::vector<Dims>& v, const std::vector<Dims>& lo,
                     const std::vector<Dims>& hi) {
    if (v.size() != lo.size() || v.size() != hi.size()) return false;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].nbDims != lo[i].nbDims || v[i].nbDims != hi[i].nbDims) return false;
      for (int32_t k = 0; k < v[i].nbDims; ++k)
        if (v[i].d[k] < lo[i].d[k] || v[i].d[k] > hi[i].d[k]) return false;
    }
    return true;
  }

  void onShapeChange(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (!o.isContext) {
      flag(&o, e.seq, 9, "shape-change-noncontext",
           describe(o) + ": " + at + ", but only context objects hear shape changes; " +
               "expected build and engine objects never to get onShapeChange");
    } else if (!o.attached) {
      flag(&o, e.seq, 9, "shape-change-unattached",
           describe(o) + ": " + at + " while not attached; expected it between " +
               "attachToContext and detachFromContext");
    }
    if (!e.shapes.empty() && !e.min.empty() && !e.max.empty()) {
      std::vector<Dims> in, out, loIn, loOut, hiIn, hiOut;
      const bool parsed = parseTraceShapes(e.shapes, in, out) &&
                          parseTraceShapes(e.min, loIn, loOut) &&
                          parseTraceShapes(e.max, hiIn, hiOut);
      if (!parsed || !within(in, loIn, hiIn) || !within(out, loOut, hiOut)) {
        flag(&o, e.seq, 9, "outside-" + std::to_string(e.seq),
             describe(o) + ": " + at + " with shapes " + e.shapes + ", not inside the " +
                 "profile's range from " + e.min + " to " + e.max +
                 "; expected every shape inside the box");
      }
    }
    if (e.status != 0) {
      o.heard = false;
      return;
    }
    if (o.heard && !e.shapes.empty() && e.shapes == o.heardShapes) {
      flag(&o, e.seq, 9, "repeat-" + std::to_string(e.seq),
           describe(o) + ": " + at + " repeats the shapes " + e.shapes +
               " of its onShapeChange at seq " + std::to_string(o.heardSeq) +
               "; expected exactly one call per shape change");
    }
    o.heard = true;
    o.heardShapes = e.shapes;
    o.heardSeq = e.seq;
  }

  void onInitialize(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (o.isContext) {
      flag(&o, e.seq, 3, "init-context",
           describe(o) + ": " + at + ", but context objects are never initialized; expected " +
               "them to share the engine object's resources through clone()");
    }
    if (o.initCount > 0) {
      flag(&o, e.seq, 2, "init-twice",
           describe(o) + ": " + at + " is a second initialize (first at seq " +
               std::to_string(o.initSeq) + "); expected at most one per object");
    } else {
      o.initSeq = e.seq;
      o.initStatus = e.status;
    }
    ++o.initCount;
    if (e.status == 0) o.initOk = true;
  }

  void onTerminate(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (!o.initOk) {
      std::string why = o.initCount == 0
                            ? "it was never initialized"
                            : "its initialize at seq " + std::to_string(o.initSeq) +
                                  " failed with status " + std::to_string(o.initStatus);
      flag(&o, e.seq, 2, "terminate-uninit",
           describe(o) + ": " + at + ", but " + why +
               "; expected terminate only after a successful initialize");
    } else if (o.terminateCount > 0) {
      flag(&o, e.seq, 2, "terminate-twice",
           describe(o) + ": " + at + " is a second terminate (first at seq " +
               std::to_string(o.terminateSeq) + "); expected exactly one");
    }
    if (o.terminateCount == 0) o.terminateSeq = e.seq;
    ++o.terminateCount;
  }

  void onDestroy(ObjectState& o, const TraceRecord& e, const std::string& at) {
    if (o.initOk && o.terminateCount == 0) {
      flag(&o, e.seq, 2, "no-terminate",
           describe(o) + ": " + at + " without terminate, though initialize succeeded at seq " +
               std::to_string(o.initSeq) + "; expected terminate before destroy");
    }
    if (o.attached) {
      flag(&o, e.seq, 5, "destroy-attached",
           describe(o) + ": " + at + " while attached since seq " + std::to_string(o.attachSeq) +
               "; expected detachFromContext before destroy");
    }
    o.destroyed = true;
    o.destroySeq = e.seq;
  }

  void finish() {
    std::vector<const ObjectState*> alive;
    for (const auto& [id, o] : objects_) {
      if (!o.destroyed) alive.push_back(&o);
    }
    std::sort(alive.begin(), alive.end(),
              [](const ObjectState* a, const ObjectState* b) { return a->madeSeq < b->madeSeq; });
    const int64_t end = std::numeric_limits<int64_t>::max();
    for (const ObjectState* o : alive) {
      const std::string last = "last call " + o->lastCall + " at seq " + std::to_string(o->lastSeq);
      flag(o, o->madeSeq, 1, "leak",
           describe(*o) + ": never destroyed (leak; " + last + "); expected exactly one destroy",
           end);
      if (o->initOk && o->terminateCount == 0) {
        flag(o, o->madeSeq, 2, "never-terminated",
             describe(*o) + ": initialize succeeded at seq " + std::to_string(o->initSeq) +
                 " but terminate never came; expected terminate before destroy",
             end);
      }
      if (o->attached) {
        flag(o, o->madeSeq, 5, "never-detached",
             describe(*o) + ": attached at seq " + std::to_string(o->attachSeq) +
                 " and never detached; expected detachFromContext before destroy",
             end);
      }
    }
  }

  std::unordered_map<int64_t, ObjectState> objects_;
  std::vector<Failure> failures_;
  std::vector<TraceViolation> out_;
  std::set<std::tuple<int64_t, int, std::string>> reported_;
};

}  // namespace

Status parseTraceRecord(std::string_view line, TraceRecord& r) {
  JsonObject obj;
  KILN_RETURN_IF_ERROR(parseJsonLine(line, obj));
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  KILN_RETURN_IF_ERROR(getInteger(obj, "seq", 1, kMax, false, false, r.seq));
  std::string phase;
  KILN_RETURN_IF_ERROR(getString(obj, "phase", phase));
  if (!parseTracePhase(phase, r.phase)) {
    return invalidArgument("unknown phase \"" + phase +
                           "\"; expected parse, build, serialize, deserialize, context, infer "
                           "or teardown");
  }
  KILN_RETURN_IF_ERROR(getString(obj, "plugin", r.plugin));
  KILN_RETURN_IF_ERROR(getString(obj, "version", r.version));
  KILN_RETURN_IF_ERROR(getString(obj, "ns", r.ns));
  KILN_RETURN_IF_ERROR(getString(obj, "layer", r.layer));
  KILN_RETURN_IF_ERROR(getString(obj, "call", r.call));
  KILN_RETURN_IF_ERROR(getInteger(obj, "object", 1, kMax, true, false, r.object));
  KILN_RETURN_IF_ERROR(getInteger(obj, "result", 1, kMax, true, true, r.result));
  int64_t status = 0;
  KILN_RETURN_IF_ERROR(getInteger(obj, "status", std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), false, false, status));
  r.status = static_cast<int32_t>(status);
  KILN_RETURN_IF_ERROR(getInteger(obj, "thread", 1, kMax, false, false, r.thread));
  for (auto [key, out] : {std::pair{"shapes", &r.shapes}, {"min", &r.min}, {"max", &r.max}}) {
    if (obj.find(key)) KILN_RETURN_IF_ERROR(getString(obj, key, *out));
  }

  if (r.call.empty()) return invalidArgument("\"call\" is empty");
  if (r.object < 0 && !isCreatorMethod(r.call)) {
    return invalidArgument("\"object\" is null, but " + r.call + " is not a creator method");
  }
  if (r.object >= 0 &&
      (r.call == "createPlugin" || r.call == "deserializePlugin" || r.call == "getFieldNames")) {
    return invalidArgument(r.call + " is a creator method; expected \"object\": null");
  }
  if (r.result >= 0 && !isCreatingCall(r.call)) {
    return invalidArgument("\"result\" on " + r.call +
                           "; only createPlugin, deserializePlugin and clone make objects");
  }
  return Status::ok();
}

Status parseTrace(const std::vector<std::string>& lines, std::vector<TraceRecord>& records) {
  records.clear();
  int64_t lastSeq = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    TraceRecord r;
    Status s = parseTraceRecord(line, r);
    if (!s.isOk()) {
      return invalidArgument("trace line " + std::to_string(i + 1) + ": " + s.message());
    }
    if (r.seq <= lastSeq) {
      return invalidArgument("trace line " + std::to_string(i + 1) + ": seq " +
                             std::to_string(r.seq) + " does not follow seq " +
                             std::to_string(lastSeq) +
                             "; expected increasing seq (two writers on one file?)");
    }
    lastSeq = r.seq;
    records.push_back(std::move(r));
  }
  return Status::ok();
}

Status readTraceFile(const std::string& path, std::vector<std::string>& lines) {
  lines.clear();
  std::ifstream in(path, std::ios::binary);
  if (!in) return ioError("cannot open trace file '" + path + "'");
  std::string line;
  while (std::getline(in, line)) lines.push_back(std::move(line));
  if (in.bad()) return ioError("error reading trace file '" + path + "'");
  return Status::ok();
}

std::string formatTraceViolation(const TraceViolation& v) {
  return "seq " + std::to_string(v.seq) + ": guarantee " + std::to_string(v.guarantee) + ": " +
         v.message;
}

std::vector<TraceViolation> checkTraceRecords(const std::vector<TraceRecord>& records) {
  return Checker().run(records);
}

Status checkTrace(const std::vector<std::string>& lines, std::vector<TraceViolation>& violations) {
  violations.clear();
  std::vector<TraceRecord> records;
  KILN_RETURN_IF_ERROR(parseTrace(lines, records));
  violations = checkTraceRecords(records);
  return Status::ok();
}

Status checkTraceFile(const std::string& path, std::vector<TraceViolation>& violations) {
  violations.clear();
  std::vector<std::string> lines;
  KILN_RETURN_IF_ERROR(readTraceFile(path, lines));
  Status s = checkTrace(lines, violations);
  if (!s.isOk()) return s.withContext("in '" + path + "'");
  return Status::ok();
}

}  // namespace kiln
