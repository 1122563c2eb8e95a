// What `kiln bench` prints and writes: the report as a table for the terminal and as JSON, the
// profiled runs as a Chrome trace (chrome://tracing, Perfetto), and the progress line. Pure
// functions of the measured numbers, unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_stats.h"

namespace kiln::cli {

struct BenchReport {
  std::string plan;           // the PLAN or --onnx MODEL given
  std::string target;         // what the plan records: "cpu", "cuda:sm_90"
  std::string device;         // where it ran: "cpu", "cuda:0"
  bool deviceEvents = false;  // latency from CUDA events (else the CPU's steady clock)
  int streams = 1;
  bool cudaGraph = false;     // --cuda-graph: the bench's own graph of each context's enqueue
  bool engineGraphs = false;  // the contexts replayed their own graphs (setCudaGraphs)
  int64_t batchItems = 1;
  std::string batchFrom;  // how batchItems was found: "--batch-items", "dim 0 of input 'x'"
  double warmupMs = 0;
  int64_t warmupInferences = 0;
  int64_t inferences = 0;  // timed, all streams
  double wallMs = 0;
  Summary latency, enqueue;
  uint64_t weightBytes = 0, contextBytes = 0;
  // --profile: per-layer times over `profileRuns` runs of one context, never in a CUDA graph.
  bool profiled = false;
  int profileRuns = 0;
  std::vector<LayerSummary> layers;
};

double inferencesPerSecond(const BenchReport& report);
double itemsPerSecond(const BenchReport& report);

// "1.5 KiB", "12 B", "3.2 MiB".
std::string byteText(uint64_t bytes);

// The report for the terminal: what ran, throughput, latency and host enqueue percentiles,
// memory, and (profiled) the per-layer table.
std::string reportText(const BenchReport& report);

// The same as one JSON object, times in milliseconds (the keys say so: latency_ms, ...).
std::string reportJson(const BenchReport& report);

// Chrome trace format (JSON object format): one complete event ("ph": "X", "ts" and "dur" in
// microseconds) per profiled run and one per layer of it, nested in its run, on one track.
// `runStartMs[r]` is when run r began; a layer's startMs counts from there.
std::string chromeTrace(const BenchReport& report, const std::vector<LayerSample>& layers,
                        const std::vector<double>& runStartMs);

// "timed 1.0 s of at least 3.0 s, 1234 inferences": the progress of a long run.
std::string progressLine(double elapsedS, double durationS, int64_t inferences);

}  // namespace kiln::cli
