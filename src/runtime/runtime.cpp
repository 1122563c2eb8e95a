// Runtime -> Engine -> ExecutionContext, on the CPU backend or on CUDA (where each context owns a
// device arena and workspace, its library handles and its plugins' resources, and enqueue()
// only puts work on the caller's stream).
#include "kiln/runtime.h"

#include <atomic>

#include "core/aligned_buffer.h"
#include "core/plan.h"
#include "runtime/engine_state.h"

#if KILN_HAVE_CUDA
#include "backends/cuda/context_resources.h"
#include "backends/cuda/library_handles.h"
#endif

namespace kiln {
namespace {

// Per-context resources a plugin's context object may ask for. The CPU has no library handles.
class CpuContextResources final : public IPluginContextResources {
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
    IPluginContextResources* resources = &resources_;
#if KILN_HAVE_CUDA
    if (engine_->device == DeviceKind::kCUDA) {
      KILN_RETURN_IF_ERROR(cuda::setDevice(engine_->deviceIndex));
      KILN_RETURN_IF_ERROR(deviceArena_.allocate(engine_->plan.arenaBytes, "the activation arena"));
      KILN_RETURN_IF_ERROR(
          deviceWorkspace_.allocate(engine_->workspaceBytes, "the context workspace"));
      // Handles are made now, not inside enqueue(), which may be under graph capture.
      if (engine_->usesLibraries) KILN_RETURN_IF_ERROR(libraries_.createAll());
      cudaResources_ =
          std::make_unique<cuda::CudaContextResources>(engine_->deviceIndex, libraries_);
      resources = cudaResources_.get();
    }
#endif
    if (engine_->device == DeviceKind::kCPU) {
      try {
        arena_.resize(engine_->plan.arenaBytes);
        workspace_.resize(engine_->workspaceBytes);
      } catch (const std::bad_alloc&) {
        return invalidArgument("cannot allocate " + std::to_string(engine_->plan.arenaBytes) +
                               " activation and " + std::to_string(engine_->workspaceBytes) +
                               " workspace bytes for an execution context");
      }
    }
    PhaseScope phase(TracePhase::kContext);
    plugins_.resize(engine_->steps.size());
    for (size_t s = 0; s < engine_->steps.size(); ++s) {
      const EngineStep& step = engine_->steps[s];
      if (!step.plugin) continue;
      KILN_RETURN_IF_ERROR(step.plugin->clone(plugins_[s]));
      KILN_RETURN_IF_ERROR(plugins_[s]->attachToContext(resources));
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
#if KILN_HAVE_CUDA
        if (engine_->device == DeviceKind::kCUDA)
          return engine_->deviceWeights[tensor.weightIndex].data();
#endif
        return const_cast<uint8_t*>(engine_->plan.weights[tensor.weightIndex]->data());
      case plan::TensorKind::kACTIVATION:
#if KILN_HAVE_CUDA
        if (engine_->device == DeviceKind::kCUDA)
          return static_cast<uint8_t*>(deviceArena_.data()) + tensor.arenaOffset;
#endif
        return arena_.data() + tensor.arenaOffset;
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
#if KILN_HAVE_CUDA
    cuda::RunContext cudaRun;
    if (engine_->device == DeviceKind::kCUDA) {
      KILN_RETURN_IF_ERROR(cuda::setDevice(engine_->deviceIndex));
      cudaRun.stream = stream;
      cudaRun.libraries = &libraries_;
    }
#endif
    void* workspace = workspace_.data();
#if KILN_HAVE_CUDA
    if (engine_->device == DeviceKind::kCUDA) workspace = deviceWorkspace_.data();
#endif
    std::vector<const void*> ins;
    std::vector<void*> outs;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const plan::Step& step = plan.steps[s];
      const EngineStep& engineStep = engine_->steps[s];
      ins.clear();
      outs.clear();
      for (int32_t i : step.inputs) ins.push_back(address(i));
      for (int32_t o : step.outputs) outs.push_back(address(o));
      Status status;
      if (engineStep.kernel) {
        status = engineStep.kernel->run(ins.data(), outs.data(), workspace);
#if KILN_HAVE_CUDA
      } else if (engineStep.cudaKernel) {
        status = engineStep.cudaKernel->run(ins.data(), outs.data(), workspace, cudaRun);
#endif
      } else {
        status = plugins_[s]->enqueue(engineStep.inputs.data(), engineStep.outputs.data(),
                                      ins.data(), outs.data(), workspace, stream);
      }
      if (!status) {
        return status.withContext("enqueue: layer '" + step.layerName + "' (" +
                                  layerTypeName(step.type) + ")");
      }
    }
    return Status::ok();
  }

  std::shared_ptr<const EngineState> engine_;
  AlignedBuffer arena_;
  AlignedBuffer workspace_;
  std::vector<void*> bindings_;
  CpuContextResources resources_;
#if KILN_HAVE_CUDA
  cuda::DeviceBuffer deviceArena_;
  cuda::DeviceBuffer deviceWorkspace_;
  cuda::LibraryHandles libraries_;
  std::unique_ptr<cuda::CudaContextResources> cudaResources_;
#endif
  // Declared last so that context objects are detached and destroyed before the resources
  // they were given.
  std::vector<std::shared_ptr<PluginObject>> plugins_;  // per step; context objects
  std::atomic<bool> busy_{false};
};

class Engine final : public IEngine {
 public:
  explicit Engine(std::shared_ptr<EngineState> state) : state_(std::move(state)) {}

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
    return PluginTensorDesc{t.dims, t.type, t.format, state_->device};
  }
  const char* getTarget() const override { return state_->plan.target.c_str(); }

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
