#include "bench_report.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "core/json.h"

namespace kiln::cli {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return n < 0 ? std::string() : std::string(buffer, std::min<size_t>(n, sizeof buffer - 1));
}

// JSON has no NaN or infinity; a measurement never gives one, but a report must still parse.
std::string number(double v) { return std::isfinite(v) ? format("%.9g", v) : "null"; }

std::string summaryJson(const Summary& s) {
  return "{\"count\": " + std::to_string(s.count) + ", \"min\": " + number(s.min) +
         ", \"median\": " + number(s.median) + ", \"mean\": " + number(s.mean) +
         ", \"p90\": " + number(s.p90) + ", \"p99\": " + number(s.p99) +
         ", \"max\": " + number(s.max) + "}";
}

std::string summaryRow(const char* label, const Summary& s) {
  return format("  %-14s %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f\n", label, s.min, s.median,
                s.mean, s.p90, s.p99, s.max);
}

// Long layer names are cut from the front: their ends ("block3/conv2") tell them apart.
std::string fit(const std::string& text, size_t width) {
  return text.size() <= width ? text : "..." + text.substr(text.size() - (width - 3));
}

}  // namespace

double inferencesPerSecond(const BenchReport& r) {
  return perSecond(static_cast<double>(r.inferences), r.wallMs);
}

double itemsPerSecond(const BenchReport& r) {
  return inferencesPerSecond(r) * static_cast<double>(r.batchItems);
}

std::string byteText(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  return format("%.1f %s", v, units[u]);
}

std::string reportText(const BenchReport& r) {
  std::string out;
  out += format("kiln bench: %s (plan target %s) on %s, %d stream%s%s\n", r.plan.c_str(),
                r.target.c_str(), r.device.c_str(), r.streams, r.streams == 1 ? "" : "s",
                r.cudaGraph      ? ", CUDA graph replays"
                : r.engineGraphs ? ", the engine's CUDA graphs"
                : r.deviceEvents ? ", layer by layer"
                                 : "");
  out += format("batch: %lld item%s per inference (%s)\n", static_cast<long long>(r.batchItems),
                r.batchItems == 1 ? "" : "s", r.batchFrom.c_str());
  out += format("warm-up: %.1f ms, %lld inferences\n", r.warmupMs,
                static_cast<long long>(r.warmupInferences));
  out +=
      format("timed: %.1f ms, %lld inferences\n", r.wallMs, static_cast<long long>(r.inferences));
  out += format("throughput: %.2f inferences/s, %.2f items/s\n", inferencesPerSecond(r),
                itemsPerSecond(r));
  out += format("  %-14s %10s %10s %10s %10s %10s %10s\n", "time (ms)", "min", "median", "mean",
                "p90", "p99", "max");
  out += summaryRow(r.deviceEvents ? "GPU compute" : "latency", r.latency);
  out += summaryRow("host enqueue", r.enqueue);
  out += r.deviceEvents
             ? "  GPU compute: CUDA events around each inference on its stream; inputs and "
               "outputs stay in device memory\n"
             : "  latency: steady clock around each enqueue, which the CPU backend runs before "
               "returning\n";
  out += format(
      "memory: weights %s on the device, %s per context (activation arena and "
      "workspace)\n",
      byteText(r.weightBytes).c_str(), byteText(r.contextBytes).c_str());
  if (!r.profiled) return out;
  out += format(
      "per-layer times over %d profiled run%s of one context%s (ms; share of the sum of "
      "layer means):\n",
      r.profileRuns, r.profileRuns == 1 ? "" : "s", r.cudaGraph ? ", without the CUDA graph" : "");
  out += format("  %4s  %-28s %-18s %-20s %9s %9s %9s %7s %9s\n", "#", "layer", "type", "tactic",
                "mean", "median", "max", "share", "host");
  double total = 0, hostTotal = 0;
  for (const LayerSummary& l : r.layers) {
    total += l.time.mean;
    hostTotal += l.host.mean;
    out += format("  %4d  %-28s %-18s %-20s %9.4f %9.4f %9.4f %6.1f%% %9.4f\n", l.index,
                  fit(l.name, 28).c_str(), fit(l.type, 18).c_str(), fit(l.tactic, 20).c_str(),
                  l.time.mean, l.time.median, l.time.max, 100.0 * l.share, l.host.median);
  }
  out += format("  %4s  %-28s %-18s %-20s %9.4f %9s %9s %6.1f%% %9.4f\n", "", "total", "", "",
                total, "", "", r.layers.empty() ? 0.0 : 100.0, hostTotal);
  out +=
      "  host: the median host time of the layer's launch (its kernels, library call or plugin "
      "enqueue); total: the sum of the means\n";
  return out;
}

std::string reportJson(const BenchReport& r) {
  std::string j = "{\n";
  j += "  \"plan\": " + jsonString(r.plan) + ",\n";
  j += "  \"target\": " + jsonString(r.target) + ",\n";
  j += "  \"device\": " + jsonString(r.device) + ",\n";
  j += "  \"streams\": " + std::to_string(r.streams) + ",\n";
  j += std::string("  \"cuda_graph\": ") + (r.cudaGraph ? "true" : "false") + ",\n";
  j += std::string("  \"engine_graphs\": ") + (r.engineGraphs ? "true" : "false") + ",\n";
  j += "  \"batch_items\": " + std::to_string(r.batchItems) + ",\n";
  j += "  \"batch_from\": " + jsonString(r.batchFrom) + ",\n";
  j += "  \"warmup\": {\"ms\": " + number(r.warmupMs) +
       ", \"inferences\": " + std::to_string(r.warmupInferences) + "},\n";
  j += "  \"timed\": {\"ms\": " + number(r.wallMs) +
       ", \"inferences\": " + std::to_string(r.inferences) + "},\n";
  j += "  \"throughput\": {\"inferences_per_s\": " + number(inferencesPerSecond(r)) +
       ", \"items_per_s\": " + number(itemsPerSecond(r)) + "},\n";
  j += std::string("  \"latency_clock\": ") +
       (r.deviceEvents ? "\"cuda_events\"" : "\"steady_clock\"") + ",\n";
  j += "  \"latency_ms\": " + summaryJson(r.latency) + ",\n";
  j += "  \"enqueue_ms\": " + summaryJson(r.enqueue) + ",\n";
  j += "  \"memory\": {\"weight_bytes\": " + std::to_string(r.weightBytes) +
       ", \"context_bytes\": " + std::to_string(r.contextBytes) + "}";
  if (r.profiled) {
    j += ",\n  \"profile\": {\"runs\": " + std::to_string(r.profileRuns) +
         ", \"cuda_graph\": false, \"layers\": [";
    for (size_t i = 0; i < r.layers.size(); ++i) {
      const LayerSummary& l = r.layers[i];
      j += std::string(i ? "," : "") + "\n    {\"index\": " + std::to_string(l.index) +
           ", \"name\": " + jsonString(l.name) + ", \"type\": " + jsonString(l.type) +
           ", \"tactic\": " + jsonString(l.tactic) + ", \"ms\": " + summaryJson(l.time) +
           ", \"host_ms\": " + summaryJson(l.host) + ", \"share\": " + number(l.share) + "}";
    }
    j += r.layers.empty() ? "]}" : "\n  ]}";
  }
  j += "\n}\n";
  return j;
}

std::string chromeTrace(const BenchReport& r, const std::vector<LayerSample>& layers,
                        const std::vector<double>& runStartMs) {
  // One process, one track: runs follow each other, and each run's layers nest inside it.
  std::string j = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  j += "  {\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": "
       "{\"name\": " +
       jsonString("kiln bench " + r.plan + " on " + r.device) + "}}";
  std::vector<double> runEndMs(runStartMs.size(), 0);
  for (const LayerSample& s : layers) {
    if (s.run < 0 || static_cast<size_t>(s.run) >= runStartMs.size()) continue;
    runEndMs[s.run] = std::max(runEndMs[s.run], s.startMs + s.durationMs);
  }
  auto event = [&](const std::string& name, const std::string& category, double startMs,
                   double durationMs, const std::string& args) {
    j += ",\n  {\"name\": " + jsonString(name) + ", \"cat\": " + jsonString(category) +
         ", \"ph\": \"X\", \"ts\": " + number(startMs * 1000.0) +
         ", \"dur\": " + number(durationMs * 1000.0) + ", \"pid\": 1, \"tid\": 1, \"args\": {" +
         args + "}}";
  };
  for (size_t run = 0; run < runStartMs.size(); ++run)
    event("inference " + std::to_string(run), "inference", runStartMs[run], runEndMs[run],
          "\"run\": " + std::to_string(run));
  for (const LayerSample& s : layers) {
    if (s.run < 0 || static_cast<size_t>(s.run) >= runStartMs.size()) continue;
    event(s.name, s.type, runStartMs[s.run] + s.startMs, s.durationMs,
          "\"run\": " + std::to_string(s.run) + ", \"index\": " + std::to_string(s.index) +
              ", \"type\": " + jsonString(s.type) + ", \"tactic\": " + jsonString(s.tactic) +
              ", \"host_ms\": " + number(s.hostMs));
  }
  j += "\n], \"otherData\": {\"plan\": " + jsonString(r.plan) +
       ", \"target\": " + jsonString(r.target) + ", \"device\": " + jsonString(r.device) +
       ", \"clock\": " + jsonString(r.deviceEvents ? "cuda_events" : "steady_clock") + "}}\n";
  return j;
}

std::string progressLine(double elapsedS, double durationS, int64_t inferences) {
  return format("timed %.1f s of at least %.1f s, %lld inferences", elapsedS, durationS,
                static_cast<long long>(inferences));
}

}  // namespace kiln::cli
