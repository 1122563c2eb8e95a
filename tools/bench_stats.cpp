#include "bench_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln::cli {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  s.median = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p99 = percentile(samples, 99);
  return s;
}

double perSecond(double count, double wallMs) { return wallMs > 0 ? count * 1000.0 / wallMs : 0; }

std::vector<LayerSummary> summarizeLayers(const std::vector<LayerSample>& samples) {
  std::map<int32_t, std::vector<double>> times, hostTimes;
  std::map<int32_t, const LayerSample*> first;
  for (const LayerSample& s : samples) {
    times[s.index].push_back(s.durationMs);
    hostTimes[s.index].push_back(s.hostMs);
    first.emplace(s.index, &s);
  }
  std::vector<LayerSummary> layers;
  double total = 0;
  for (auto& [index, t] : times) {
    LayerSummary l;
    l.index = index;
    l.name = first[index]->name;
    l.type = first[index]->type;
    l.tactic = first[index]->tactic;
    l.time = summarize(std::move(t));
    l.host = summarize(std::move(hostTimes[index]));
    total += l.time.mean;
    layers.push_back(std::move(l));
  }
  for (LayerSummary& l : layers) l.share = total > 0 ? l.time.mean / total : 0;
  return layers;
}

}  // namespace kiln::cli
