#include "plugin/trace_render.h"

#include <algorithm>

namespace kiln {

std::string renderTraceRecords(const std::vector<TraceRecord>& records) {
  // Layers are padded to one width (within reason) so that the calls line up.
  constexpr size_t kMaxLayerWidth = 24;
  size_t layerWidth = 1;
  for (const TraceRecord& r : records) {
    layerWidth = std::max(layerWidth, std::min(r.layer.size(), kMaxLayerWidth));
  }
  // Calls from the first thread that traced (usually the main one) go unmarked.
  const int64_t mainThread = records.empty() ? 0 : records.front().thread;

  std::string out;
  bool first = true;
  TracePhase phase = TracePhase::kParse;
  for (const TraceRecord& r : records) {
    if (first || r.phase != phase) {
      out += '[';
      out += tracePhaseName(r.phase);
      out += "]\n";
      phase = r.phase;
      first = false;
    }
    std::string layer = r.layer.empty() ? "-" : r.layer;
    out += "  ";
    out += layer;
    out.append(layer.size() < layerWidth ? layerWidth - layer.size() : 0, ' ');
    out += "  ";
    if (!r.ns.empty()) out += r.ns + "::";
    out += r.plugin;
    if (r.object < 0) {
      out += "Creator";
    } else {
      out += "Plugin#" + std::to_string(r.object);
    }
    // Shapes as the call's argument: "onShapeChange(2x3x8x8,5x4 -> 5x3x7x7)".
    const auto arrow = [](std::string text) {
      const size_t semi = text.find(';');
      if (semi != std::string::npos) text.replace(semi, 1, " -> ");
      return text;
    };
    out += "::" + r.call + "(" + arrow(r.shapes) + ")";
    if (!r.min.empty()) out += " in [" + arrow(r.min) + " .. " + arrow(r.max) + "]";
    if (r.result >= 0) out += " --> " + std::to_string(r.result);
    if (r.status != 0) out += "  FAILED status=" + std::to_string(r.status);
    if (r.thread != mainThread) out += "  (thread " + std::to_string(r.thread) + ")";
    out += '\n';
  }
  return out;
}

std::string renderTrace(const std::vector<std::string>& lines, Status& status) {
  std::vector<TraceRecord> records;
  status = parseTrace(lines, records);
  if (!status.isOk()) return "";
  return renderTraceRecords(records);
}

}  // namespace kiln
