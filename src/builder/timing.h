// Measuring candidates: run a few times to warm up, then keep the median of timed runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Median wall time in milliseconds of `run` (a callable returning Status); the first failure
// stops the measurement and is returned.
template <typename Run>
Status medianMilliseconds(int warmup, int runs, Run&& run, double& ms) {
  for (int i = 0; i < warmup; ++i) KILN_RETURN_IF_ERROR(run());
  std::vector<double> times;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    KILN_RETURN_IF_ERROR(run());
    const auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  ms = times[times.size() / 2];
  return Status::ok();
}

}  // namespace kiln
