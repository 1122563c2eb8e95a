// The CPU backend: host memory, synchronous kernels on the calling thread, steady-clock timing.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <vector>

#include "backends/backend.h"
#include "core/aligned_buffer.h"
#include "ops/op_table.h"

namespace kiln {
namespace {

class HostBuffer final : public IDeviceBuffer {
 public:
  explicit HostBuffer(size_t bytes) : buffer_(bytes) {}
  void* data() const override { return buffer_.data(); }
  size_t size() const override { return buffer_.size(); }

 private:
  AlignedBuffer buffer_;
};

// CPU work is done when enqueue() returns: there is nothing to wait for.
class HostStream final : public IDeviceStream {
 public:
  Stream get() const override { return nullptr; }
  Status synchronize() override { return Status::ok(); }
};

// The CPU runs enqueued work before enqueue() returns, so the time an event is recorded is the
// time the work before it finished.
class HostEvent final : public IDeviceEvent {
 public:
  Status record(Stream) override {
    time_ = std::chrono::steady_clock::now();
    recorded_ = true;
    return Status::ok();
  }
  Status synchronize() override { return Status::ok(); }
  Status elapsedSince(const IDeviceEvent& start, double& ms) const override {
    const auto* other = dynamic_cast<const HostEvent*>(&start);
    if (!other) return invalidArgument("elapsedSince: the start event is not a CPU event");
    if (!recorded_ || !other->recorded_)
      return invalidArgument("elapsedSince: an event that was never recorded");
    ms = std::chrono::duration<double, std::milli>(time_ - other->time_).count();
    return Status::ok();
  }

 private:
  std::chrono::steady_clock::time_point time_;
  bool recorded_ = false;
};

class CpuTimer final : public Timer {
 public:
  const RunContext& context() override { return context_; }
  Status prepareLibraries() override { return Status::ok(); }
  Status median(int warmup, int runs, const std::function<Status()>& run, double& ms) override {
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

 private:
  RunContext context_;
};

// Per-context resources a plugin's context object may ask for. The CPU has no library handles.
class CpuPluginResources final : public IPluginContextResources {
 public:
  DeviceKind getDeviceKind() const noexcept override { return DeviceKind::kCPU; }
  int32_t getDeviceIndex() const noexcept override { return -1; }
  void* allocatePersistent(size_t bytes, size_t alignment) noexcept override {
    if (alignment > AlignedBuffer::kAlignment || bytes == 0) return nullptr;
    try {
      buffers_.emplace_back(bytes);
      return buffers_.back().data();
    } catch (...) {
      return nullptr;
    }
  }
  void* getCublasHandle() noexcept override { return nullptr; }
  void* getCudnnHandle() noexcept override { return nullptr; }

 private:
  std::vector<AlignedBuffer> buffers_;
};

class CpuContextResources final : public ContextResources {
 public:
  IPluginContextResources* pluginResources() override { return &plugins_; }
  RunContext runContext(Stream) override { return RunContext{}; }

 private:
  CpuPluginResources plugins_;
};

class CpuBackend final : public Backend {
 public:
  DeviceKind getKind() const override { return DeviceKind::kCPU; }

  Status allocate(size_t bytes, const char* what,
                  std::unique_ptr<IDeviceBuffer>& buffer) const override {
    try {
      buffer = std::make_unique<HostBuffer>(bytes);
    } catch (const std::bad_alloc&) {
      return invalidArgument("cannot allocate " + std::to_string(bytes) + " bytes of host memory" +
                             (what ? std::string(" for ") + what : std::string()));
    }
    return Status::ok();
  }
  Status copyFromHost(void* device, const void* host, size_t bytes) const override {
    if (bytes) std::memcpy(device, host, bytes);
    return Status::ok();
  }
  Status copyToHost(void* host, const void* device, size_t bytes) const override {
    if (bytes) std::memcpy(host, device, bytes);
    return Status::ok();
  }
  Status fill(void* device, int value, size_t bytes, Stream) const override {
    if (bytes) std::memset(device, value, bytes);
    return Status::ok();
  }
  Status createStream(std::unique_ptr<IDeviceStream>& stream) const override {
    stream = std::make_unique<HostStream>();
    return Status::ok();
  }
  Status createEvent(std::unique_ptr<IDeviceEvent>& event) const override {
    event = std::make_unique<HostEvent>();
    return Status::ok();
  }
  Status captureGraph(Stream, const std::function<Status()>&,
                      std::unique_ptr<IDeviceGraph>&) const override {
    return unsupported("graphs need a CUDA engine (the CPU backend runs enqueue synchronously)");
  }

  bool buildsFor(const std::string& target) const override { return target == "cpu"; }
  Status resolveBuildTarget(const std::string&, int32_t& deviceIndex,
                            std::string& planTarget) const override {
    deviceIndex = -1;
    planTarget = "cpu";
    return Status::ok();
  }
  bool runsPlanTarget(const std::string& planTarget) const override { return planTarget == "cpu"; }
  Status openPlanTarget(const std::string&, int32_t& deviceIndex) const override {
    deviceIndex = -1;
    return Status::ok();
  }
  int32_t deviceCount(std::string*) const override { return 1; }
  Status activate(int32_t) const override { return Status::ok(); }
  std::string timingDeviceName() const override {
    static const std::string name = [] {
      std::ifstream in("/proc/cpuinfo");
      std::string line;
      while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const size_t colon = line.find(':');
        std::string model = colon == std::string::npos ? line : line.substr(colon + 1);
        while (!model.empty() && model.front() == ' ') model.erase(model.begin());
        for (char& c : model)
          if (c == '\t' || c == ' ') c = '_';
        return "cpu:" + model;
      }
      return std::string("cpu:unknown");
    }();
    return name;
  }
  bool usesHostMemory() const override { return true; }
  bool isHostReadable(const void*) const override { return true; }
  bool isCapturing(Stream) const override { return false; }

  std::span<const Tactic> tactics(LayerType type) const override { return ops::cpuTactics(type); }

  Status createTimer(std::unique_ptr<Timer>& timer) const override {
    timer = std::make_unique<CpuTimer>();
    return Status::ok();
  }
  Status createContextResources(int32_t, bool,
                                std::unique_ptr<ContextResources>& out) const override {
    out = std::make_unique<CpuContextResources>();
    return Status::ok();
  }
};

// Stateless, so constant-initialized: there before any static object that might ask for it.
constinit const CpuBackend kCpuBackend;

}  // namespace

const Backend& cpuBackend() { return kCpuBackend; }

}  // namespace kiln
