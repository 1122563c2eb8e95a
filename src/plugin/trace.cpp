#include "plugin/trace.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "kiln/registry.h"
#include "plugin/json_line.h"

namespace kiln {

namespace {

constexpr const char* kPhaseNames[] = {"parse",   "build", "serialize", "deserialize",
                                       "context", "infer", "teardown"};

void appendKey(std::string& out, const char* key) {
  out += ",\"";
  out += key;
  out += "\":";
}

// ,"key":"value" and ,"key":number.
void appendField(std::string& out, const char* key, std::string_view value) {
  appendKey(out, key);
  appendJsonString(out, value);
}
void appendField(std::string& out, const char* key, int64_t value) {
  appendKey(out, key);
  out += std::to_string(value);
}

void appendDims(std::string& out, const Dims& d) {
  if (d.nbDims <= 0) {
    out += "[]";
    return;
  }
  for (int32_t k = 0; k < d.nbDims && k < Dims::kMaxDims; ++k) {
    if (k) out += 'x';
    out += std::to_string(d.d[k]);
  }
}

bool parseDims(std::string_view text, Dims& d) {
  d = Dims{};
  if (text == "[]") return true;
  while (true) {
    if (d.nbDims >= Dims::kMaxDims) return false;
    const size_t x = text.find('x');
    const std::string_view part = text.substr(0, x);
    if (part.empty() || part.size() > 18) return false;
    int64_t v = 0;
    bool negative = false;
    size_t i = 0;
    if (part[0] == '-') negative = true, i = 1;
    if (i == part.size()) return false;
    for (; i < part.size(); ++i) {
      if (part[i] < '0' || part[i] > '9') return false;
      v = v * 10 + (part[i] - '0');
    }
    d.d[d.nbDims++] = negative ? -v : v;
    if (x == std::string_view::npos) return true;
    text.remove_prefix(x + 1);
  }
}

bool parseDimsList(std::string_view text, std::vector<Dims>& out) {
  out.clear();
  if (text.empty()) return true;
  while (true) {
    const size_t comma = text.find(',');
    Dims d;
    if (!parseDims(text.substr(0, comma), d)) return false;
    out.push_back(d);
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string traceShapesText(const Dims* dims, int32_t nbInputs, int32_t nbOutputs) {
  std::string out;
  for (int32_t i = 0; i < nbInputs + nbOutputs; ++i) {
    if (i == nbInputs)
      out += ';';
    else if (i)
      out += ',';
    appendDims(out, dims[i]);
  }
  if (nbOutputs == 0) out += ';';
  return out;
}

bool parseTraceShapes(std::string_view text, std::vector<Dims>& inputs,
                      std::vector<Dims>& outputs) {
  const size_t semi = text.find(';');
  if (semi == std::string_view::npos) return false;
  return parseDimsList(text.substr(0, semi), inputs) &&
         parseDimsList(text.substr(semi + 1), outputs);
}

const char* tracePhaseName(TracePhase phase) {
  int index = static_cast<int>(phase);
  if (index < 0 || index >= static_cast<int>(std::size(kPhaseNames))) return "unknown";
  return kPhaseNames[index];
}

bool parseTracePhase(std::string_view name, TracePhase& phase) {
  for (size_t i = 0; i < std::size(kPhaseNames); ++i) {
    if (name == kPhaseNames[i]) {
      phase = static_cast<TracePhase>(i);
      return true;
    }
  }
  return false;
}

std::string formatTraceEvent(const TraceEvent& event, int64_t seq, int64_t thread) {
  auto text = [](const char* s) { return std::string_view(s == nullptr ? "" : s); };
  std::string out;
  out.reserve(160);
  out += "{\"seq\":";
  out += std::to_string(seq);
  appendField(out, "phase", tracePhaseName(event.phase));
  appendField(out, "plugin", text(event.plugin));
  appendField(out, "version", text(event.version));
  appendField(out, "ns", text(event.ns));
  appendField(out, "layer", text(event.layer));
  appendField(out, "call", text(event.call));
  appendKey(out, "object");
  out += event.object < 0 ? std::string("null") : std::to_string(event.object);
  if (event.result >= 0) appendField(out, "result", event.result);
  appendField(out, "status", event.status);
  if (event.shapes) {
    appendField(out, "shapes", event.shapes->shapes);
    if (!event.shapes->min.empty()) appendField(out, "min", event.shapes->min);
    if (!event.shapes->max.empty()) appendField(out, "max", event.shapes->max);
  }
  appendField(out, "thread", thread);
  out += '}';
  return out;
}

Tracer& Tracer::instance() {
  // Deliberately leaked: plugin objects released from static destructors may still be traced.
  static Tracer* tracer = new Tracer();
  return *tracer;
}

Tracer::~Tracer() {
  std::lock_guard<std::mutex> lock(mu_);
  closeLocked();
}

int64_t Tracer::newObjectId() {
  static std::atomic<int64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

int Tracer::configureFromEnvironment() {
  std::lock_guard<std::mutex> lock(mu_);
  int state = state_.load(std::memory_order_acquire);
  if (state != kUnconfigured) return state;  // another thread or setPath() got here first
  const char* path = std::getenv("KILN_TRACE");
  Status status = Status::ok();
  if (path != nullptr && path[0] != '\0') status = openLocked(path);
  if (!status.isOk()) {
    // No logger call: the logger may itself be mid-initialisation at first use.
    std::fprintf(stderr, "kiln: KILN_TRACE: %s; tracing is off\n", status.message().c_str());
  }
  state = file_ != nullptr ? kOn : kOff;
  state_.store(state, std::memory_order_release);
  return state;
}

Status Tracer::openLocked(const std::string& path) {
  closeLocked();
  seq_ = 0;
  threads_.clear();
  if (path.empty()) return Status::ok();
  if (path == "-") {
    file_ = stderr;
    ownsFile_ = false;
    return Status::ok();
  }
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return ioError("cannot open trace file '" + path + "' for writing: " + std::strerror(errno));
  }
  file_ = file;
  ownsFile_ = true;
  return Status::ok();
}

void Tracer::closeLocked() {
  if (file_ != nullptr) {
    if (ownsFile_) {
      std::fclose(file_);
    } else {
      std::fflush(file_);
    }
  }
  file_ = nullptr;
  ownsFile_ = false;
}

Status Tracer::setPath(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  Status status = openLocked(path);
  state_.store(file_ != nullptr ? kOn : kOff, std::memory_order_release);
  return status;
}

void Tracer::write(const TraceEvent& event) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ == nullptr) return;  // turned off since enabled() was read
  auto [it, inserted] = threads_.try_emplace(std::this_thread::get_id(), 0);
  if (inserted) it->second = static_cast<int64_t>(threads_.size());
  std::string line = formatTraceEvent(event, ++seq_, it->second);
  line += '\n';
  // A failed write (disk full) must not fail the traced call; the checker then reports the
  // trace as truncated.
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

void Tracer::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_ != nullptr) std::fflush(file_);
}

Status setTracePath(const std::string& path) { return Tracer::instance().setPath(path); }

void flushTrace() { Tracer::instance().flush(); }

}  // namespace kiln
