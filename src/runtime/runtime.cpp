// Runtime -> Engine -> ExecutionContext, on whichever backend the plan targets: each context owns
// its activation arena and workspace in the backend's memory, its library handles and its plugins'
// resources, and enqueue() only puts work on the caller's stream (CPU: runs it).
#include "kiln/runtime.h"

#include <atomic>

#include "core/plan.h"
#include "runtime/engine_device.h"
#include "runtime/engine_state.h"

namespace kiln {
namespace {

class ExecutionContext final : public IExecutionContext {
 public:
  explicit ExecutionContext(std::shared_ptr<const EngineState> engine)
      : engine_(std::move(engine)), bindings_(engine_->plan.tensors.size(), nullptr) {}

  ~ExecutionContext() override {
    // Context objects: detachFromContext() then destroy(), before the resources they used.
    PhaseScope phase(TracePhase::kTeardown);
    plugins_.clear();
  }

  Status setUp() {
    const Backend& backend = *engine_->backend;
    KILN_RETURN_IF_ERROR(backend.activate(engine_->deviceIndex));
    KILN_RETURN_IF_ERROR(
        backend.allocate(engine_->plan.arenaBytes, "the activation arena", arena_));
    KILN_RETURN_IF_ERROR(
        backend.allocate(engine_->workspaceBytes, "the context workspace", workspace_));
    KILN_RETURN_IF_ERROR(
        backend.createContextResources(engine_->deviceIndex, engine_->usesLibraries, resources_));
    PhaseScope phase(TracePhase::kContext);
    plugins_.resize(engine_->steps.size());
    for (size_t s = 0; s < engine_->steps.size(); ++s) {
      const EngineStep& step = engine_->steps[s];
      if (!step.plugin) continue;
      KILN_RETURN_IF_ERROR(step.plugin->clone(plugins_[s]));
      KILN_RETURN_IF_ERROR(plugins_[s]->attachToContext(resources_->pluginResources()));
    }
    return Status::ok();
  }

  Status setTensorAddress(const char* name, void* address) override {
    if (!name) return invalidArgument("setTensorAddress: null name");
    auto it = engine_->ioTensors.find(name);
    if (it == engine_->ioTensors.end()) {
      return notFound(std::string("setTensorAddress: the engine has no input or output '") + name +
                      "'");
    }
    const plan::Tensor& t = engine_->plan.tensors[it->second];
    if (!address && plan::tensorBytes(t.dims, t.type) > 0) {
      return invalidArgument(std::string("setTensorAddress: null address for '") + name + "'");
    }
    bindings_[it->second] = address;
    return Status::ok();
  }

  void* getTensorAddress(const char* name) const override {
    auto it = name ? engine_->ioTensors.find(name) : engine_->ioTensors.end();
    return it == engine_->ioTensors.end() ? nullptr : bindings_[it->second];
  }

  Status setProfiler(IProfiler* profiler) override {
    if (busy_.load())
      return invalidArgument("setProfiler: this execution context is enqueuing on another thread");
    // The events are made here, once, so that a profiled enqueue only records them.
    if (profiler && events_.empty()) {
      std::vector<std::unique_ptr<IDeviceEvent>> events(engine_->steps.size() + 1);
      KILN_RETURN_IF_ERROR(engine_->backend->activate(engine_->deviceIndex));
      for (auto& event : events) KILN_RETURN_IF_ERROR(engine_->backend->createEvent(event));
      events_ = std::move(events);
    }
    profiler_ = profiler;
    return Status::ok();
  }
  IProfiler* getProfiler() const override { return profiler_; }

  Status enqueue(Stream stream) override {
    // One thread at a time per context: a second caller would share the arena.
    if (busy_.exchange(true)) {
      return invalidArgument(
          "enqueue: this execution context is already running on another "
          "thread; use one context per thread");
    }
    Status s = run(stream);
    busy_.store(false);
    return s;
  }

 private:
  void* address(int32_t t) const {
    const plan::Tensor& tensor = engine_->plan.tensors[t];
    switch (tensor.kind) {
      case plan::TensorKind::kINPUT:
      case plan::TensorKind::kOUTPUT:
        return bindings_[t];
      case plan::TensorKind::kCONSTANT:
        return const_cast<void*>(engine_->weight(tensor.weightIndex));
      case plan::TensorKind::kACTIVATION:
        return static_cast<uint8_t*>(arena_->data()) + tensor.arenaOffset;
    }
    return nullptr;
  }

  Status run(Stream stream) {
    PhaseScope phase(TracePhase::kInfer);
    const plan::Plan& plan = engine_->plan;
    for (int32_t t : plan.inputs) {
      if (!bindings_[t] && plan::tensorBytes(plan.tensors[t].dims, plan.tensors[t].type) > 0) {
        return invalidArgument("enqueue: input '" + plan.tensors[t].name +
                               "' has no address; call setTensorAddress first");
      }
    }
    for (int32_t t : plan.outputs) {
      if (!bindings_[t] && plan::tensorBytes(plan.tensors[t].dims, plan.tensors[t].type) > 0) {
        return invalidArgument("enqueue: output '" + plan.tensors[t].name +
                               "' has no address; call setTensorAddress first");
      }
    }
    KILN_RETURN_IF_ERROR(engine_->backend->activate(engine_->deviceIndex));
    const RunContext context = resources_->runContext(stream);
    void* workspace = workspace_->data();
    // Profiling costs one test per step when off; on, an event before each step and after the last.
    IProfiler* const profiler = profiler_;
    if (profiler) KILN_RETURN_IF_ERROR(events_[0]->record(stream));
    std::vector<const void*> ins;
    std::vector<void*> outs;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const plan::Step& step = plan.steps[s];
      const EngineStep& engineStep = engine_->steps[s];
      ins.clear();
      outs.clear();
      for (int32_t i : step.inputs) ins.push_back(address(i));
      for (int32_t o : step.outputs) outs.push_back(address(o));
      const Status status =
          engineStep.kernel
              ? engineStep.kernel->run(ins.data(), outs.data(), workspace, context)
              : plugins_[s]->enqueue(engineStep.inputs.data(), engineStep.outputs.data(),
                                     ins.data(), outs.data(), workspace, stream);
      if (!status) {
        return status.withContext("enqueue: layer '" + step.layerName + "' (" +
                                  layerTypeName(step.type) + ")");
      }
      if (profiler) KILN_RETURN_IF_ERROR(events_[s + 1]->record(stream));
    }
    return profiler ? report(*profiler) : Status::ok();
  }

  // Waits for the profiled enqueue's last event, then reports every step's time.
  Status report(IProfiler& profiler) {
    KILN_RETURN_IF_ERROR(events_.back()->synchronize().withContext("enqueue: profiling"));
    const plan::Plan& plan = engine_->plan;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const plan::Step& step = plan.steps[s];
      LayerTime time;
      time.index = static_cast<int32_t>(s);
      time.layerName = step.layerName.c_str();
      time.layerType = layerTypeName(step.type);
      time.tactic =
          step.pluginIndex >= 0 ? plan.plugins[step.pluginIndex].name.c_str() : step.tactic.c_str();
      KILN_RETURN_IF_ERROR(events_[s]->elapsedSince(*events_[0], time.startMs));
      KILN_RETURN_IF_ERROR(events_[s + 1]->elapsedSince(*events_[s], time.durationMs));
      profiler.reportLayerTime(time);
    }
    return Status::ok();
  }

  std::shared_ptr<const EngineState> engine_;
  std::unique_ptr<IDeviceBuffer> arena_;
  std::unique_ptr<IDeviceBuffer> workspace_;
  std::vector<void*> bindings_;
  std::unique_ptr<ContextResources> resources_;
  // Declared last so that context objects are detached and destroyed before the resources
  // they were given.
  std::vector<std::shared_ptr<PluginObject>> plugins_;  // per step; context objects
  std::atomic<bool> busy_{false};
  IProfiler* profiler_ = nullptr;
  std::vector<std::unique_ptr<IDeviceEvent>> events_;  // with a profiler: steps + 1
};

class Engine final : public IEngine {
 public:
  explicit Engine(std::shared_ptr<EngineState> state)
      : state_(std::move(state)), device_(*state_->backend, state_->deviceIndex) {}

  int32_t getNbIOTensors() const override {
    return static_cast<int32_t>(state_->plan.inputs.size() + state_->plan.outputs.size());
  }
  const char* getIOTensorName(int32_t index) const override {
    const int32_t t = ioIndex(index);
    return t < 0 ? nullptr : state_->plan.tensors[t].name.c_str();
  }
  TensorIOMode getTensorIOMode(const char* name) const override {
    auto it = name ? state_->ioTensors.find(name) : state_->ioTensors.end();
    if (it == state_->ioTensors.end()) return TensorIOMode::kINPUT;
    return state_->plan.tensors[it->second].kind == plan::TensorKind::kINPUT
               ? TensorIOMode::kINPUT
               : TensorIOMode::kOUTPUT;
  }
  PluginTensorDesc getTensorDesc(const char* name) const override {
    PluginTensorDesc d;
    auto it = name ? state_->ioTensors.find(name) : state_->ioTensors.end();
    if (it == state_->ioTensors.end()) {
      d.dims.nbDims = -1;
      return d;
    }
    const plan::Tensor& t = state_->plan.tensors[it->second];
    return PluginTensorDesc{t.dims, t.type, t.format, state_->backend->getKind()};
  }
  const char* getTarget() const override { return state_->plan.target.c_str(); }
  const IDevice& getDevice() const override { return device_; }
  EngineMemory getMemory() const override {
    EngineMemory memory;
    for (const auto& w : state_->deviceWeights) memory.weightBytes += w ? w->size() : 0;
    memory.contextBytes = state_->plan.arenaBytes + state_->workspaceBytes;
    return memory;
  }

  Status createExecutionContext(std::unique_ptr<IExecutionContext>& context) override {
    auto ctx = std::make_unique<ExecutionContext>(state_);
    KILN_RETURN_IF_ERROR(ctx->setUp());  // on failure `ctx` tears down what it made
    context = std::move(ctx);
    return Status::ok();
  }

  std::string inspect() const override { return inspectPlan(state_->plan); }

 private:
  int32_t ioIndex(int32_t index) const {
    const auto& p = state_->plan;
    if (index < 0) return -1;
    if (index < static_cast<int32_t>(p.inputs.size())) return p.inputs[index];
    index -= static_cast<int32_t>(p.inputs.size());
    if (index < static_cast<int32_t>(p.outputs.size())) return p.outputs[index];
    return -1;
  }

  std::shared_ptr<EngineState> state_;
  EngineDevice device_;
};

class Runtime final : public IRuntime {
 public:
  Status deserializeEngine(const void* data, size_t size,
                           std::unique_ptr<IEngine>& engine) override {
    if (!data && size) return invalidArgument("deserializeEngine: null plan data");
    // No exception leaves the public API: running out of memory on a hostile plan is an error.
    try {
      plan::Plan plan;
      KILN_RETURN_IF_ERROR(plan::readPlan(data, size, plan));
      std::shared_ptr<EngineState> state;
      KILN_RETURN_IF_ERROR(buildEngineState(std::move(plan), state));
      engine = std::make_unique<Engine>(std::move(state));
      return Status::ok();
    } catch (const std::bad_alloc&) {
      return corruptData("out of memory while loading the plan: its sizes are implausible");
    }
  }
};

}  // namespace

std::unique_ptr<IRuntime> createRuntime() { return std::make_unique<Runtime>(); }

}  // namespace kiln
