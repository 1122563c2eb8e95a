#include "bench_loop.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Event pairs in flight per stream: the host runs at most this many inferences ahead of the
// device, which keeps the queue (and the number of events) bounded on long runs.
constexpr int64_t kSlots = 32;

struct Worker {
  BoundContext* bound = nullptr;
  std::unique_ptr<IDeviceGraph> graph;
  std::vector<std::unique_ptr<IDeviceEvent>> starts, ends;
  std::vector<double> latencyMs, enqueueMs;
  int64_t warmupInferences = 0;
  double warmupMs = 0;
  Clock::time_point finished;
  Status status;

  Status launch() {
    const Stream stream = bound->stream->get();
    return graph ? graph->launch(stream) : bound->context->enqueue(stream);
  }
  // The device time of the inference timed with slot `slot`, once it is done.
  Status collect(int64_t slot) {
    KILN_RETURN_IF_ERROR(ends[slot]->synchronize());
    double ms = 0;
    KILN_RETURN_IF_ERROR(ends[slot]->elapsedSince(*starts[slot], ms));
    latencyMs.push_back(ms);
    return Status::ok();
  }
};

}  // namespace

Status timeContexts(IEngine& engine, std::vector<BoundContext>& contexts,
                    const BenchOptions& options, const BenchProgress& progress, TimedRuns& runs) {
  const IDevice& device = engine.getDevice();
  if ((options.cudaGraph || options.engineGraphs) && device.getKind() != DeviceKind::kCUDA)
    return invalidArgument(std::string(options.cudaGraph ? "--cuda-graph" : "--engine-graphs") +
                           " needs a CUDA plan (--device cuda)");
  std::vector<Worker> workers(contexts.size());
  // Graphs and events are made before any thread starts: neither belongs in timed work.
  for (size_t w = 0; w < workers.size(); ++w) {
    Worker& worker = workers[w];
    worker.bound = &contexts[w];
    worker.starts.resize(kSlots);
    worker.ends.resize(kSlots);
    for (int64_t k = 0; k < kSlots; ++k) {
      KILN_RETURN_IF_ERROR(device.createEvent(worker.starts[k]));
      KILN_RETURN_IF_ERROR(device.createEvent(worker.ends[k]));
    }
    // The engine's graphs: the warm-up's first enqueue runs layer by layer, its second captures.
    if (options.engineGraphs) KILN_RETURN_IF_ERROR(worker.bound->context->setCudaGraphs(true));
    if (options.layerByLayer) KILN_RETURN_IF_ERROR(worker.bound->context->setCudaGraphs(false));
    if (options.cudaGraph) {
      const Stream stream = worker.bound->stream->get();
      BoundContext& bound = *worker.bound;
      KILN_RETURN_IF_ERROR(
          device
              .captureGraph(
                  stream, [&] { return bound.context->enqueue(stream); }, worker.graph)
              .withContext("capturing context " + std::to_string(w) + " in a CUDA graph"));
    }
  }

  // Timed runs start together, once every stream has warmed up; the barrier's completion step
  // takes the common start time.
  Clock::time_point start;
  std::barrier sync(static_cast<std::ptrdiff_t>(workers.size()),
                    [&start]() noexcept { start = Clock::now(); });
  std::atomic<int64_t> total{0};
  const double durationMs = options.durationS * 1000.0;

  auto body = [&](Worker& worker, bool reports) {
    IDeviceStream& stream = *worker.bound->stream;
    // Warm-up: synchronized run by run, so that it lasts what it says and leaves nothing queued.
    const Clock::time_point warmStart = Clock::now();
    do {
      worker.status = worker.launch();
      if (worker.status) worker.status = stream.synchronize();
      ++worker.warmupInferences;
    } while (worker.status && msBetween(warmStart, Clock::now()) < options.warmupMs);
    worker.warmupMs = msBetween(warmStart, Clock::now());
    sync.arrive_and_wait();  // every worker arrives once, failed or not
    if (!worker.status) return;

    Clock::time_point lastReport = start;
    int64_t i = 0;
    for (;; ++i) {
      const int64_t slot = i % kSlots;
      if (i >= kSlots && !(worker.status = worker.collect(slot))) return;
      if (!(worker.status = worker.starts[slot]->record(stream.get()))) return;
      const Clock::time_point h0 = Clock::now();
      if (!(worker.status = worker.launch())) return;
      const Clock::time_point h1 = Clock::now();
      if (!(worker.status = worker.ends[slot]->record(stream.get()))) return;
      worker.enqueueMs.push_back(msBetween(h0, h1));
      const int64_t done = total.fetch_add(1) + 1;
      if (reports && progress && msBetween(lastReport, h1) >= 1000.0) {
        lastReport = h1;
        progress(msBetween(start, h1) / 1000.0, done);
      }
      if (i + 1 >= options.iterations && msBetween(start, h1) >= durationMs) break;
    }
    // The last inferences in flight.
    if (!(worker.status = stream.synchronize())) return;
    worker.finished = Clock::now();
    for (int64_t k = std::max<int64_t>(0, i + 1 - kSlots); k <= i; ++k) {
      if (!(worker.status = worker.collect(k % kSlots))) return;
    }
  };

  std::vector<CudaGraphStats> before(workers.size());
  for (size_t w = 0; w < workers.size(); ++w)
    before[w] = workers[w].bound->context->getCudaGraphStats();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers.size(); ++w)
    threads.emplace_back(body, std::ref(workers[w]), w == 0);
  for (std::thread& t : threads) t.join();

  runs = TimedRuns();
  // Replays during warm-up and timed runs (a context's graph is captured in its warm-up).
  runs.engineGraphs = !options.cudaGraph;
  for (size_t w = 0; w < workers.size(); ++w) {
    const IExecutionContext& context = *workers[w].bound->context;
    runs.engineGraphs = runs.engineGraphs && context.getCudaGraphs() &&
                        context.getCudaGraphStats().replayed > before[w].replayed;
  }
  Clock::time_point last = start;
  for (size_t w = 0; w < workers.size(); ++w) {
    Worker& worker = workers[w];
    if (!worker.status) return worker.status.withContext("stream " + std::to_string(w));
    runs.latencyMs.insert(runs.latencyMs.end(), worker.latencyMs.begin(), worker.latencyMs.end());
    runs.enqueueMs.insert(runs.enqueueMs.end(), worker.enqueueMs.begin(), worker.enqueueMs.end());
    runs.inferencesPerStream.push_back(static_cast<int64_t>(worker.enqueueMs.size()));
    runs.warmupInferences += worker.warmupInferences;
    runs.warmupMs = std::max(runs.warmupMs, worker.warmupMs);
    last = std::max(last, worker.finished);
  }
  runs.wallMs = msBetween(start, last);
  return Status::ok();
}

namespace {

class Collector final : public IProfiler {
 public:
  explicit Collector(ProfiledRuns& out) : out_(out) {}
  int32_t run = 0;
  void reportLayerTime(const LayerTime& t) override {
    LayerSample s;
    s.run = run;
    s.index = t.index;
    s.name = t.layerName;
    s.type = t.layerType;
    s.tactic = t.tactic;
    s.startMs = t.startMs;
    s.durationMs = t.durationMs;
    s.hostMs = t.hostMs;
    out_.layers.push_back(std::move(s));
  }

 private:
  ProfiledRuns& out_;
};

}  // namespace

Status profileContext(BoundContext& bound, int runs, ProfiledRuns& profiled) {
  profiled = ProfiledRuns();
  Collector collector(profiled);
  KILN_RETURN_IF_ERROR(bound.context->setProfiler(&collector));
  const Stream stream = bound.stream->get();
  const Clock::time_point first = Clock::now();
  Status status;
  for (int r = 0; r < runs && status; ++r) {
    collector.run = r;
    profiled.runStartMs.push_back(msBetween(first, Clock::now()));
    status = bound.context->enqueue(stream);
  }
  // Off again whatever happened: the collector is about to go.
  const Status off = bound.context->setProfiler(nullptr);
  KILN_RETURN_IF_ERROR(status.withContext("profiled run"));
  return off;
}

}  // namespace kiln::cli
