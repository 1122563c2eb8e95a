// The CUDA backend: device memory, streams, CUDA graphs, event timing on a builder stream, and
// per-context cuBLAS/cuDNN handles and plugin resources. Kernels are the ops' CUDA tactics.
#include <cublasLt.h>
#include <cudnn.h>

#include <algorithm>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/context_resources.h"
#include "backends/cuda/device.h"
#include "backends/cuda/graph.h"
#include "backends/cuda/library_handles.h"
#include "ops/op_table.h"

namespace kiln {
namespace {

class DeviceMemory final : public IDeviceBuffer {
 public:
  void* data() const override { return buffer.data(); }
  size_t size() const override { return buffer.size(); }
  cuda::DeviceBuffer buffer;
};

class CudaStream final : public IDeviceStream {
 public:
  Stream get() const override { return stream.get(); }
  Status synchronize() override { return cuda::synchronize(stream.get()); }
  cuda::StreamHandle stream;
};

class CudaGraph final : public IDeviceGraph {
 public:
  Status launch(Stream stream) override { return graph.launch(stream); }
  cuda::CapturedGraph graph;
};

class CudaEvent final : public IDeviceEvent {
 public:
  Status record(Stream stream) override { return event.record(stream); }
  Status synchronize() override { return event.synchronize(); }
  Status elapsedSince(const IDeviceEvent& start, double& ms) const override {
    const auto* other = dynamic_cast<const CudaEvent*>(&start);
    if (!other) return invalidArgument("elapsedSince: the start event is not a CUDA event");
    return event.elapsedSince(other->event, ms);
  }
  cuda::EventHandle event;
};

class CudaTimer final : public Timer {
 public:
  Status create() {
    KILN_RETURN_IF_ERROR(stream_.create());
    context_.stream = stream_.get();
    context_.libraries = &libraries_;
    return Status::ok();
  }
  const RunContext& context() override { return context_; }
  Status prepareLibraries() override { return libraries_.createAll(); }
  Status median(int warmup, int runs, const std::function<Status()>& run, double& ms) override {
    for (int i = 0; i < warmup; ++i) KILN_RETURN_IF_ERROR(run());
    std::vector<double> times;
    for (int i = 0; i < std::max(runs, 1); ++i) {
      KILN_RETURN_IF_ERROR(timer_.start(context_.stream));
      KILN_RETURN_IF_ERROR(run());
      double t = 0;
      KILN_RETURN_IF_ERROR(timer_.stop(context_.stream, t));
      times.push_back(t);
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    ms = times[times.size() / 2];
    return Status::ok();
  }

 private:
  cuda::StreamHandle stream_;
  cuda::LibraryHandles libraries_;
  cuda::EventTimer timer_;
  RunContext context_;
};

class CudaContext final : public ContextResources {
 public:
  explicit CudaContext(int32_t device) : plugins_(device, libraries_) {}
  Status create(bool usesLibraries) {
    // Handles are made now, not inside enqueue(), which may be under graph capture.
    if (usesLibraries) KILN_RETURN_IF_ERROR(libraries_.createAll());
    return Status::ok();
  }
  IPluginContextResources* pluginResources() override { return &plugins_; }
  RunContext runContext(Stream stream) override {
    RunContext ctx;
    ctx.stream = stream;
    ctx.libraries = &libraries_;
    return ctx;
  }

 private:
  cuda::LibraryHandles libraries_;
  // Declared after the handles it lends out, so it is destroyed first.
  cuda::CudaContextResources plugins_;
};

class CudaBackend final : public Backend {
 public:
  DeviceKind getKind() const override { return DeviceKind::kCUDA; }

  Status allocate(size_t bytes, const char* what,
                  std::unique_ptr<IDeviceBuffer>& buffer) const override {
    auto memory = std::make_unique<DeviceMemory>();
    KILN_RETURN_IF_ERROR(memory->buffer.allocate(bytes, what ? what : "device memory"));
    buffer = std::move(memory);
    return Status::ok();
  }
  Status copyFromHost(void* device, const void* host, size_t bytes) const override {
    return cuda::copyToDevice(device, host, bytes);
  }
  Status copyToHost(void* host, const void* device, size_t bytes) const override {
    return cuda::copyToHost(host, device, bytes);
  }
  Status fill(void* device, int value, size_t bytes, Stream stream) const override {
    return cuda::fillBytesAsync(device, value, bytes, stream);
  }
  Status createStream(std::unique_ptr<IDeviceStream>& stream) const override {
    auto s = std::make_unique<CudaStream>();
    KILN_RETURN_IF_ERROR(s->stream.create());
    stream = std::move(s);
    return Status::ok();
  }
  Status createEvent(std::unique_ptr<IDeviceEvent>& event) const override {
    auto e = std::make_unique<CudaEvent>();
    KILN_RETURN_IF_ERROR(e->event.create());
    event = std::move(e);
    return Status::ok();
  }
  Status captureGraph(Stream stream, const std::function<Status()>& enqueue,
                      std::unique_ptr<IDeviceGraph>& graph) const override {
    auto g = std::make_unique<CudaGraph>();
    KILN_RETURN_IF_ERROR(g->graph.capture(stream, enqueue));
    graph = std::move(g);
    return Status::ok();
  }

  bool buildsFor(const std::string& target) const override {
    return target == "cuda" || target.rfind("cuda:", 0) == 0;
  }
  Status resolveBuildTarget(const std::string& target, int32_t& deviceIndex,
                            std::string& planTarget) const override {
    int index = 0;
    if (target != "cuda") {
      const std::string n = target.substr(5);
      if (n.empty() || n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos)
        return invalidArgument("target '" + target + "': the GPU ordinal must be a number");
      index = std::stoi(n);
    }
    cuda::DeviceInfo info;
    Status s = cuda::getDeviceInfo(index, info);
    if (!s) return s.withContext("target '" + target + "'");
    KILN_RETURN_IF_ERROR(cuda::setDevice(index));
    deviceIndex = index;
    planTarget = cuda::targetName(info);
    return Status::ok();
  }
  bool runsPlanTarget(const std::string& planTarget) const override {
    return planTarget.rfind("cuda:", 0) == 0;
  }
  // The plan runs on the calling thread's current GPU, which must be of the architecture it
  // records (kernels are native code for it).
  Status openPlanTarget(const std::string& planTarget, int32_t& deviceIndex) const override {
    if (cuda::deviceCount() == 0)
      return unsupported("the plan targets '" + planTarget +
                         "' but this machine has no usable GPU (" + cuda::noDeviceReason() +
                         "); rebuild it for the CPU");
    int current = 0;
    KILN_RETURN_IF_ERROR(cuda::currentDevice(current));
    cuda::DeviceInfo info;
    KILN_RETURN_IF_ERROR(cuda::getDeviceInfo(current, info));
    if (cuda::targetName(info) != planTarget)
      return unsupported("the plan targets '" + planTarget + "' but GPU " +
                         std::to_string(current) + " (" + info.name + ") is " +
                         cuda::targetName(info) + "; rebuild the plan on this GPU");
    deviceIndex = current;
    return Status::ok();
  }
  int32_t deviceCount(std::string* why) const override {
    const int count = cuda::deviceCount();
    if (count == 0 && why) *why = "no CUDA GPU: " + cuda::noDeviceReason();
    return count;
  }
  Status activate(int32_t deviceIndex) const override { return cuda::setDevice(deviceIndex); }
  // The current GPU, by name and architecture ("cuda:NVIDIA_H200:sm_90").
  std::string timingDeviceName() const override {
    int index = 0;
    cuda::DeviceInfo info;
    if (!cuda::currentDevice(index) || !cuda::getDeviceInfo(index, info)) return "cuda:unknown";
    std::string name = info.name;
    for (char& c : name)
      if (c == '\t' || c == ' ') c = '_';
    // The libraries' versions too: a cached choice among cuDNN engines (cudnn_graph_1 is "the
    // heuristic's second") or cuBLASLt algorithms holds for the version it was timed with.
    return "cuda:" + name + ":sm_" + std::to_string(info.major) + std::to_string(info.minor) +
           ":cudnn" + std::to_string(cudnnGetVersion()) + ":cublaslt" +
           std::to_string(cublasLtGetVersion());
  }
  bool usesHostMemory() const override { return false; }
  bool isHostReadable(const void* address) const override { return cuda::isHostReadable(address); }
  bool isCapturing(Stream stream) const override { return cuda::isCapturing(stream); }

  std::span<const Tactic> tactics(LayerType type) const override { return ops::cudaTactics(type); }

  Status createTimer(std::unique_ptr<Timer>& timer) const override {
    auto t = std::make_unique<CudaTimer>();
    KILN_RETURN_IF_ERROR(t->create());
    timer = std::move(t);
    return Status::ok();
  }
  Status createContextResources(int32_t deviceIndex, bool usesLibraries,
                                std::unique_ptr<ContextResources>& out) const override {
    KILN_RETURN_IF_ERROR(cuda::setDevice(deviceIndex));
    auto context = std::make_unique<CudaContext>(deviceIndex);
    KILN_RETURN_IF_ERROR(context->create(usesLibraries));
    out = std::move(context);
    return Status::ok();
  }
};

// Stateless, so constant-initialized: there before any static object that might ask for it.
constinit const CudaBackend kCudaBackend;

}  // namespace

const Backend& cudaBackend() { return kCudaBackend; }

}  // namespace kiln
