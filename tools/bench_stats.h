// The statistics `kiln bench` reports: percentiles and summaries of latency samples, throughput,
// and per-layer times aggregated over profiled runs. Pure functions, unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

// A summary of samples (milliseconds). All zero when there are none.
struct Summary {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, p90 = 0, p99 = 0;
};

// The p-th percentile (0 <= p <= 100) of ascending `sorted` samples, interpolated linearly
// between the two nearest ranks (NumPy's default): p = 0 is the minimum, 100 the maximum, 50 the
// median. 0 for no samples.
double percentile(const std::vector<double>& sorted, double p);

Summary summarize(std::vector<double> samples);

// Per second: `count` events over `wallMs` milliseconds (0 when no time passed).
double perSecond(double count, double wallMs);

// One layer's time in one profiled run.
struct LayerSample {
  int32_t run = 0;    // which profiled run
  int32_t index = 0;  // execution order
  std::string name, type, tactic;
  double startMs = 0, durationMs = 0;
  double hostMs = 0;  // the host time its launch took (LayerTime::hostMs)
};

// One layer over all profiled runs. `share` is its mean time over the sum of every layer's mean.
struct LayerSummary {
  int32_t index = 0;
  std::string name, type, tactic;
  Summary time;
  Summary host;  // its launches' host time
  double share = 0;
};

// By layer, in execution order (samples of one index share its name, type and tactic).
std::vector<LayerSummary> summarizeLayers(const std::vector<LayerSample>& samples);

}  // namespace kiln::cli
