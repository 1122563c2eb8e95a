// Runtime -> Engine -> ExecutionContext, on whichever backend the plan targets: each context owns
// its activation arena and workspace in the backend's memory, its library handles and its plugins'
// resources, and enqueue() only puts work on the caller's stream (CPU: runs it).
#include "kiln/runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#include "core/integer_values.h"
#include "core/log.h"
#include "core/plan.h"
#include "runtime/engine_device.h"
#include "runtime/engine_state.h"
#include "runtime/graph_cache.h"

namespace kiln {
namespace {

class ExecutionContext final : public IExecutionContext {
 public:
  explicit ExecutionContext(std::shared_ptr<const EngineState> engine)
      : engine_(std::move(engine)), bindings_(engine_->plan.tensors.size(), nullptr) {
    resetInputShapes();
  }

  ~ExecutionContext() override {
    // Context objects: detachFromContext() then destroy(), before the resources they used.
    PhaseScope phase(TracePhase::kTeardown);
    plugins_.clear();
  }

  Status setUp() {
    const Backend& backend = *engine_->backend;
    KILN_RETURN_IF_ERROR(backend.activate(engine_->deviceIndex));
    KILN_RETURN_IF_ERROR(backend.allocate(engine_->arenaBytes, "the activation arena", arena_));
    arenaOffsets_ = nullptr;
    if (dynamic()) arenaOffsets_ = &engine_->plan.profiles[0].arenaOffsets;
    KILN_RETURN_IF_ERROR(
        backend.allocate(engine_->workspaceBytes, "the context workspace", workspace_));
    KILN_RETURN_IF_ERROR(
        backend.createContextResources(engine_->deviceIndex, engine_->usesLibraries, resources_));
    PhaseScope phase(TracePhase::kContext);
    // The steps' address lists, sized once for the widest step: enqueue() only fills them.
    size_t widestIn = 0, widestOut = 0;
    for (const plan::Step& step : engine_->plan.steps) {
      widestIn = std::max(widestIn, step.inputs.size());
      widestOut = std::max(widestOut, step.outputs.size());
    }
    stepInputs_.reserve(widestIn);
    stepOutputs_.reserve(widestOut);
    plugins_.resize(engine_->steps.size());
    heard_.resize(engine_->steps.size());
    for (size_t s = 0; s < engine_->steps.size(); ++s) {
      const EngineStep& step = engine_->steps[s];
      if (!step.plugin) continue;
      KILN_RETURN_IF_ERROR(step.plugin->clone(plugins_[s]));
      KILN_RETURN_IF_ERROR(plugins_[s]->attachToContext(resources_->pluginResources()));
      // Sized once, so that a shape change inside enqueue() allocates nothing.
      heard_[s].dims.resize(step.inputs.size() + step.outputs.size());
    }
    // CUDA graphs by default where a replay keeps every contract: no plugin's enqueue() to skip.
    // KILN_CUDA_GRAPHS=0 keeps every context layer by layer unless its caller asks.
    const bool hasPlugin =
        std::any_of(engine_->steps.begin(), engine_->steps.end(),
                    [](const EngineStep& step) { return step.plugin != nullptr; });
    const char* env = std::getenv("KILN_CUDA_GRAPHS");
    const bool envOff = env && std::string(env) == "0";
    if (backend.getKind() == DeviceKind::kCUDA && !hasPlugin && !envOff)
      graphs_ = GraphMode::kAutomatic;
    // Graph keys (makeGraphKey) have one length per plan: their buffers are sized here.
    size_t keyLength = 3 + engine_->plan.inputs.size() + engine_->plan.outputs.size();
    for (int32_t t : engine_->plan.inputs)
      keyLength += 1 + static_cast<size_t>(std::max(0, engine_->plan.tensors[t].dims.nbDims));
    graphKey_.reserve(keyLength);
    graphCache_ = GraphCache(keyLength);
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
    if (address && plan::findShapeValueInput(engine_->plan, it->second) &&
        !engine_->backend->isHostReadable(address))
      return invalidArgument(std::string("setTensorAddress: '") + name +
                             "' is a shape-value input, whose values the engine reads on the "
                             "host: give host memory, not device memory");
    bindings_[it->second] = address;
    return Status::ok();
  }

  Status setOptimizationProfile(int32_t index) override {
    if (busy_.load())
      return invalidArgument(
          "setOptimizationProfile: this execution context is enqueuing on another thread");
    const int32_t count = std::max<int32_t>(1, static_cast<int32_t>(engine_->plan.profiles.size()));
    if (index < 0 || index >= count)
      return invalidArgument("setOptimizationProfile: profile " + std::to_string(index) +
                             " does not exist; the plan has " + std::to_string(count));
    if (!dynamic()) return Status::ok();
    const plan::Profile& profile = engine_->plan.profiles[index];
    if (profile.arenaBytes > arena_->size()) {
      // Outside enqueue: a context's memory grows to the largest profile it is switched to.
      std::unique_ptr<IDeviceBuffer> arena;
      KILN_RETURN_IF_ERROR(engine_->backend->activate(engine_->deviceIndex));
      KILN_RETURN_IF_ERROR(
          engine_->backend->allocate(profile.arenaBytes, "the activation arena", arena));
      arena_ = std::move(arena);
      graphCache_.clear();  // they wrote into the old arena
    }
    profile_ = index;
    arenaOffsets_ = &profile.arenaOffsets;
    resetInputShapes();
    return Status::ok();
  }
  int32_t getOptimizationProfile() const override { return profile_; }

  Status setInputShape(const char* name, const Dims& dims) override {
    if (busy_.load())
      return invalidArgument(
          "setInputShape: this execution context is enqueuing on another thread");
    const int32_t k = inputSlot(name);
    if (k < 0)
      return notFound(std::string("setInputShape: the engine has no input '") +
                      (name ? name : "(null)") + "'");
    const plan::Tensor& t = engine_->plan.tensors[engine_->plan.inputs[k]];
    const plan::ProfileInput* range = profileInput(profile_, engine_->plan.inputs[k]);
    const std::string what = std::string("setInputShape: input '") + name + "'";
    if (dims.nbDims != t.dims.nbDims)
      return invalidArgument(what + " has rank " + std::to_string(t.dims.nbDims) + ", the shape " +
                             "given " + std::to_string(dims.nbDims));
    for (int32_t a = 0; a < dims.nbDims; ++a) {
      const int64_t lo = range ? range->min.d[a] : t.dims.d[a];
      const int64_t hi = range ? range->max.d[a] : t.dims.d[a];
      if (dims.d[a] >= lo && dims.d[a] <= hi) continue;
      if (!range || lo == hi)
        return invalidArgument(what + " axis " + std::to_string(a) + " is fixed at " +
                               std::to_string(lo) + ", not " + std::to_string(dims.d[a]));
      return invalidArgument(
          what + " axis " + std::to_string(a) + " is " + std::to_string(dims.d[a]) +
          ", outside profile " + std::to_string(profile_) + "'s range [" + std::to_string(lo) +
          ", " + std::to_string(hi) + "]; " + fittingProfile(engine_->plan.inputs[k], dims));
    }
    if (!dynamic()) return Status::ok();  // a static plan's inputs: nothing to re-derive
    inputShapes_[k] = dims;
    return refresh();
  }

  Dims getTensorShape(const char* name) const override {
    Dims none;
    none.nbDims = -1;
    auto it = name ? engine_->ioTensors.find(name) : engine_->ioTensors.end();
    if (it == engine_->ioTensors.end()) return none;
    const int32_t t = it->second;
    if (!dynamic()) return engine_->plan.tensors[t].dims;
    const int32_t k = inputSlot(name);
    if (k >= 0 && inputShapes_[k].nbDims >= 0) return inputShapes_[k];
    if (spec_ && specStatus_.isOk()) return spec_->dims[t];
    return engine_->dynamicDims[t];
  }

  Status inferShapes(std::vector<std::string>& missing) const override {
    missing.clear();
    if (!dynamic()) return Status::ok();
    for (size_t k = 0; k < inputShapes_.size(); ++k)
      if (inputShapes_[k].nbDims < 0)
        missing.push_back(engine_->plan.tensors[engine_->plan.inputs[k]].name);
    if (!missing.empty()) return Status::ok();
    return specStatus_;
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
      hostMs_.assign(engine_->steps.size(), 0.0);
    }
    profiler_ = profiler;
    return Status::ok();
  }
  IProfiler* getProfiler() const override { return profiler_; }

  Status setCudaGraphs(bool enabled) override {
    if (busy_.load())
      return invalidArgument(
          "setCudaGraphs: this execution context is enqueuing on another thread");
    if (enabled && engine_->backend->getKind() != DeviceKind::kCUDA)
      return unsupported(std::string("setCudaGraphs: CUDA graphs need a CUDA engine; this one runs "
                                     "on the ") +
                         engine_->backend->name());
    graphs_ = enabled ? GraphMode::kOn : GraphMode::kOff;
    if (!enabled) graphCache_.clear();
    return Status::ok();
  }
  bool getCudaGraphs() const override { return graphs_ != GraphMode::kOff; }
  CudaGraphStats getCudaGraphStats() const override { return graphCache_.stats(); }

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
        return static_cast<uint8_t*>(arena_->data()) +
               (arenaOffsets_ ? (*arenaOffsets_)[t] : tensor.arenaOffset);
    }
    return nullptr;
  }

  // Shape-value inputs hold, in host memory, the values the plan was built for (no layer reads
  // them on the device: the plan took its shapes from them). Read here, before any step runs.
  Status checkShapeValues() const {
    for (const plan::ShapeValueInput& in : engine_->plan.shapeValueInputs) {
      const plan::Tensor& tensor = engine_->plan.tensors[in.tensor];
      const void* data = bindings_[in.tensor];
      if (!data) continue;  // an empty input; one with elements was refused above
      for (size_t k = 0; k < in.values.size(); ++k) {
        const int64_t v = integerAt(data, tensor.type, k);
        if (v != in.values[k]) {
          std::string built;
          for (size_t j = 0; j < in.values.size(); ++j)
            built += (j ? "," : "") + std::to_string(in.values[j]);
          return invalidArgument("enqueue: input '" + tensor.name +
                                 "' is a shape-value input and holds " + std::to_string(v) +
                                 " at index " + std::to_string(k) +
                                 ", but the plan was built for its values [" + built +
                                 "]; build a plan for the values you run with (kiln run --onnx "
                                 "builds for the values of its --input files)");
        }
      }
    }
    return Status::ok();
  }

  Status run(Stream stream) {
    PhaseScope phase(TracePhase::kInfer);
    const plan::Plan& plan = engine_->plan;
    if (dynamic()) KILN_RETURN_IF_ERROR(readyToRun());
    for (int32_t t : plan.inputs) {
      if (!bindings_[t] && plan::tensorBytes(dimsOf(t), plan.tensors[t].type) > 0) {
        return invalidArgument("enqueue: input '" + plan.tensors[t].name +
                               "' has no address; call setTensorAddress first");
      }
    }
    KILN_RETURN_IF_ERROR(checkShapeValues());
    for (int32_t t : plan.outputs) {
      if (!bindings_[t] && plan::tensorBytes(dimsOf(t), plan.tensors[t].type) > 0) {
        return invalidArgument("enqueue: output '" + plan.tensors[t].name +
                               "' has no address; call setTensorAddress first");
      }
    }
    KILN_RETURN_IF_ERROR(engine_->backend->activate(engine_->deviceIndex));
    if (graphs_ != GraphMode::kOff) {
      // A caller capturing the stream itself gets the layers in its own graph.
      if (!profiler_ && stream && !engine_->backend->isCapturing(stream)) return runGraph(stream);
      graphCache_.countDirect();
    }
    return runSteps(stream);
  }

  // The steps one by one: kernels and plugins launched on `stream` (or captured from it).
  Status runSteps(Stream stream) {
    const plan::Plan& plan = engine_->plan;
    const std::vector<EngineStep>& steps = dynamic() ? spec_->steps : engine_->steps;
    const RunContext context = resources_->runContext(stream);
    void* workspace = workspace_->data();
    // Profiling costs one test per step when off; on, an event before each step and after the last.
    IProfiler* const profiler = profiler_;
    if (profiler) KILN_RETURN_IF_ERROR(events_[0]->record(stream));
    std::vector<const void*>& ins = stepInputs_;
    std::vector<void*>& outs = stepOutputs_;
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const plan::Step& step = plan.steps[s];
      const EngineStep& engineStep = steps[s];
      ins.clear();
      outs.clear();
      for (int32_t i : step.inputs) ins.push_back(address(i));
      for (int32_t o : step.outputs) outs.push_back(address(o));
      Status status;
      // Two clock reads per step, only while profiling.
      const auto launchStart = profiler ? HostClock::now() : HostClock::time_point();
      if (engineStep.kernel) {
        // A static plan's built-in steps have their scratch in the arena (workspace_placement.h).
        void* scratch = dynamic()
                            ? workspace
                            : static_cast<uint8_t*>(arena_->data()) + engine_->workspaceOffsets[s];
        status = engineStep.kernel->run(ins.data(), outs.data(), scratch, context);
      } else {
        status = tellShapes(s, engineStep);
        if (status)
          status = plugins_[s]->enqueue(
              engineStep.inputs.data(), static_cast<int32_t>(engineStep.inputs.size()),
              engineStep.outputs.data(), static_cast<int32_t>(engineStep.outputs.size()),
              ins.data(), outs.data(), workspace, stream);
      }
      if (!status) {
        return status.withContext("enqueue: layer '" + step.layerName + "' (" +
                                  layerTypeName(step.type) + ")");
      }
      if (profiler) {
        hostMs_[s] =
            std::chrono::duration<double, std::milli>(HostClock::now() - launchStart).count();
        KILN_RETURN_IF_ERROR(events_[s + 1]->record(stream));
      }
    }
    return profiler ? report(*profiler) : Status::ok();
  }

  // CUDA graphs (setCudaGraphs, graph_cache.h): this enqueue's graph, made or replayed.
  Status runGraph(Stream stream) {
    makeGraphKey();
    const std::vector<EngineStep>& steps = dynamic() ? spec_->steps : engine_->steps;
    const Status status = graphCache_.enqueue(
        *engine_->backend, stream, graphKey_, spec_, [&] { return runSteps(stream); },
        [&]() -> Status {
          // A plugin's context object hears again the shapes this graph was captured with,
          // should another graph's have come in between (its per-shape state is what it reads).
          for (size_t s = 0; s < steps.size(); ++s)
            if (plugins_[s]) KILN_RETURN_IF_ERROR(tellShapes(s, steps[s]));
          return Status::ok();
        });
    if (graphs_ == GraphMode::kAutomatic && !GraphCache::keepsPaying(graphCache_.stats())) {
      const CudaGraphStats stats = graphCache_.stats();
      graphs_ = GraphMode::kOff;
      graphCache_.clear();
      logMessage(Severity::kInfo, "enqueue: this context now runs layer by layer: its " +
                                      std::to_string(stats.captured) +
                                      " CUDA graphs were launched " +
                                      std::to_string(stats.replayed) +
                                      " times in all, as input shapes or addresses keep changing "
                                      "(setCudaGraphs(true) keeps graphs on)");
    }
    return status;
  }

  // Profile, each input's dims, every I/O address and the arena's and workspace's: what a graph
  // bakes in. No allocation once the key has been made once.
  void makeGraphKey() {
    const plan::Plan& plan = engine_->plan;
    graphKey_.clear();
    graphKey_.push_back(static_cast<uint64_t>(profile_));
    for (int32_t t : plan.inputs) {
      const Dims& d = dimsOf(t);
      graphKey_.push_back(static_cast<uint64_t>(d.nbDims));
      for (int32_t k = 0; k < d.nbDims; ++k) graphKey_.push_back(static_cast<uint64_t>(d.d[k]));
    }
    for (int32_t t : plan.inputs) graphKey_.push_back(reinterpret_cast<uintptr_t>(bindings_[t]));
    for (int32_t t : plan.outputs) graphKey_.push_back(reinterpret_cast<uintptr_t>(bindings_[t]));
    graphKey_.push_back(reinterpret_cast<uintptr_t>(arena_->data()));
    graphKey_.push_back(reinterpret_cast<uintptr_t>(workspace_->data()));
  }

  bool dynamic() const { return !engine_->plan.profiles.empty(); }

  // Guarantee 9 (DESIGN.md §7): a context object hears its tensors' concrete shapes through
  // onShapeChange() before its first enqueue and before the first one after they change; once
  // per change, and again after a failed call.
  Status tellShapes(size_t s, const EngineStep& step) {
    HeardShapes& heard = heard_[s];
    const size_t nIn = step.inputs.size();
    bool same = heard.valid && heard.dims.size() == nIn + step.outputs.size();
    for (size_t i = 0; same && i < heard.dims.size(); ++i)
      same = heard.dims[i] == (i < nIn ? step.inputs[i].dims : step.outputs[i - nIn].dims);
    if (same) return Status::ok();
    heard.valid = false;
    const PluginRange& range =
        engine_->pluginRanges[static_cast<size_t>(dynamic() ? profile_ : 0)][s];
    KILN_RETURN_IF_ERROR(plugins_[s]->onShapeChange(
        step.inputs.data(), static_cast<int32_t>(nIn), step.outputs.data(),
        static_cast<int32_t>(step.outputs.size()), range.min.data(), range.max.data()));
    for (size_t i = 0; i < heard.dims.size(); ++i)
      heard.dims[i] = i < nIn ? step.inputs[i].dims : step.outputs[i - nIn].dims;
    heard.valid = true;
    return Status::ok();
  }

  const Dims& dimsOf(int32_t t) const {
    return dynamic() ? spec_->dims[t] : engine_->plan.tensors[t].dims;
  }

  int32_t inputSlot(const char* name) const {
    if (!name) return -1;
    const auto& inputs = engine_->plan.inputs;
    for (size_t k = 0; k < inputs.size(); ++k)
      if (engine_->plan.tensors[inputs[k]].name == name) return static_cast<int32_t>(k);
    return -1;
  }

  const plan::ProfileInput* profileInput(int32_t profile, int32_t tensor) const {
    if (!dynamic()) return nullptr;
    for (const plan::ProfileInput& in : engine_->plan.profiles[profile].inputs)
      if (in.tensor == tensor) return &in;
    return nullptr;
  }

  // "profile 2 accepts it: setOptimizationProfile(2)" or that none does.
  std::string fittingProfile(int32_t tensor, const Dims& dims) const {
    for (size_t p = 0; p < engine_->plan.profiles.size(); ++p) {
      const plan::ProfileInput* in = profileInput(static_cast<int32_t>(p), tensor);
      bool fits = in != nullptr;
      for (int32_t a = 0; fits && a < dims.nbDims; ++a)
        fits = dims.d[a] >= in->min.d[a] && dims.d[a] <= in->max.d[a];
      if (fits && static_cast<int32_t>(p) != profile_)
        return "profile " + std::to_string(p) + " accepts it: setOptimizationProfile(" +
               std::to_string(p) + ")";
    }
    return "no profile of this plan accepts it: rebuild with a profile that does";
  }

  // Fixed inputs keep their dims; dynamic ones of the selected profile wait for setInputShape.
  void resetInputShapes() {
    const plan::Plan& plan = engine_->plan;
    inputShapes_.clear();
    for (int32_t t : plan.inputs) {
      Dims d = plan.tensors[t].dims;
      if (profileInput(profile_, t)) d.nbDims = -1;
      inputShapes_.push_back(d);
    }
    spec_.reset();
    specStatus_ = Status::ok();
  }

  // Once every input has a shape: the named-dimension rules, then kernels for those shapes.
  Status refresh() {
    // Plugins' shape functions called for the new shapes are traced as inference work.
    PhaseScope phase(TracePhase::kInfer);
    spec_.reset();
    specStatus_ = Status::ok();
    for (const Dims& d : inputShapes_)
      if (d.nbDims < 0) return Status::ok();
    const plan::Plan& plan = engine_->plan;
    for (const plan::DimEquality& e : plan.equalities) {
      const auto slot = [&](int32_t t) {
        return std::find(plan.inputs.begin(), plan.inputs.end(), t) - plan.inputs.begin();
      };
      const int64_t a = inputShapes_[slot(e.tensorA)].d[e.axisA];
      const int64_t b = inputShapes_[slot(e.tensorB)].d[e.axisB];
      if (a != b) {
        specStatus_ = invalidArgument(
            "input '" + plan.tensors[e.tensorA].name + "' axis " + std::to_string(e.axisA) +
            " and input '" + plan.tensors[e.tensorB].name + "' axis " + std::to_string(e.axisB) +
            " are both '" + e.name + "' and must be equal, but their shapes give " +
            std::to_string(a) + " and " + std::to_string(b));
        return Status::ok();  // inputs may be set one by one: enqueue reports it if it stays
      }
    }
    std::shared_ptr<const Specialization> spec;
    specStatus_ = engine_->specialize(profile_, inputShapes_, spec);
    if (!specStatus_) return Status::ok();
    if (spec->workspaceBytes > workspace_->size()) {
      std::unique_ptr<IDeviceBuffer> workspace;
      KILN_RETURN_IF_ERROR(engine_->backend->activate(engine_->deviceIndex));
      KILN_RETURN_IF_ERROR(
          engine_->backend->allocate(spec->workspaceBytes, "the context workspace", workspace));
      workspace_ = std::move(workspace);
    }
    spec_ = std::move(spec);
    return Status::ok();
  }

  Status readyToRun() const {
    std::string missing;
    for (size_t k = 0; k < inputShapes_.size(); ++k) {
      if (inputShapes_[k].nbDims >= 0) continue;
      const int32_t t = engine_->plan.inputs[k];
      const plan::ProfileInput* in = profileInput(profile_, t);
      missing += (missing.empty() ? "'" : ", '") + engine_->plan.tensors[t].name + "' (profile " +
                 std::to_string(profile_) + " accepts " + rangeText(*in) + ")";
    }
    if (!missing.empty())
      return invalidArgument("enqueue: no shape set for input " + missing +
                             "; call setInputShape first");
    if (!specStatus_) return specStatus_.withContext("enqueue: the input shapes set");
    return Status::ok();
  }

  static std::string rangeText(const plan::ProfileInput& in) {
    std::string s;
    for (int32_t a = 0; a < in.min.nbDims; ++a) {
      s += a ? "x" : "";
      s += in.min.d[a] == in.max.d[a]
               ? std::to_string(in.min.d[a])
               : "[" + std::to_string(in.min.d[a]) + ".." + std::to_string(in.max.d[a]) + "]";
    }
    return s;
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
      time.tactic = step.pluginIndex >= 0 ? plan.plugins[step.pluginIndex].name.c_str()
                    : dynamic()           ? plan.profiles[profile_].tactics[s].c_str()
                                          : step.tactic.c_str();
      KILN_RETURN_IF_ERROR(events_[s]->elapsedSince(*events_[0], time.startMs));
      KILN_RETURN_IF_ERROR(events_[s + 1]->elapsedSince(*events_[s], time.durationMs));
      time.hostMs = hostMs_[s];
      profiler.reportLayerTime(time);
    }
    return Status::ok();
  }

  std::shared_ptr<const EngineState> engine_;
  std::unique_ptr<IDeviceBuffer> arena_;
  std::unique_ptr<IDeviceBuffer> workspace_;
  std::vector<void*> bindings_;
  std::unique_ptr<ContextResources> resources_;
  // Dynamic shapes: the selected profile, each input's shape (nbDims -1: not set), the kernels
  // for them (null until every input is set and they are consistent) and why not.
  int32_t profile_ = 0;
  std::vector<Dims> inputShapes_;
  std::shared_ptr<const Specialization> spec_;
  Status specStatus_;
  const std::vector<uint64_t>* arenaOffsets_ = nullptr;
  // Declared last so that context objects are detached and destroyed before the resources
  // they were given.
  std::vector<std::shared_ptr<PluginObject>> plugins_;  // per step; context objects
  // Per plugin step, the shapes its context object last heard through onShapeChange().
  struct HeardShapes {
    std::vector<Dims> dims;  // inputs then outputs
    bool valid = false;
  };
  std::vector<HeardShapes> heard_;
  // CUDA graphs (setCudaGraphs); the key buffer is reused so that making a key allocates nothing.
  // kAutomatic is the default of plugin-free CUDA plans (setUp) and gives up where graphs do not
  // pay (GraphCache::keepsPaying); kOn is the caller's.
  enum class GraphMode { kOff, kAutomatic, kOn };
  GraphMode graphs_ = GraphMode::kOff;
  GraphCache graphCache_;
  std::vector<uint64_t> graphKey_;
  std::atomic<bool> busy_{false};
  IProfiler* profiler_ = nullptr;
  std::vector<std::unique_ptr<IDeviceEvent>> events_;  // with a profiler: steps + 1
  // One step's input and output addresses (runSteps), reserved for the widest step at creation.
  std::vector<const void*> stepInputs_;
  std::vector<void*> stepOutputs_;
  using HostClock = std::chrono::steady_clock;
  std::vector<double> hostMs_;  // with a profiler: each step's launch time on the host
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
    const Dims& dims = state_->dynamicDims.empty() ? t.dims : state_->dynamicDims[it->second];
    return PluginTensorDesc{dims, t.type, t.format, state_->backend->getKind()};
  }
  int32_t getNbOptimizationProfiles() const override {
    return std::max<int32_t>(1, static_cast<int32_t>(state_->plan.profiles.size()));
  }
  Dims getProfileShape(const char* name, int32_t profile, OptProfileSelector which) const override {
    Dims none;
    none.nbDims = -1;
    const auto& plan = state_->plan;
    auto it = name ? state_->ioTensors.find(name) : state_->ioTensors.end();
    if (it == state_->ioTensors.end() ||
        plan.tensors[it->second].kind != plan::TensorKind::kINPUT || profile < 0 ||
        profile >= getNbOptimizationProfiles())
      return none;
    if (plan.profiles.empty()) return plan.tensors[it->second].dims;
    for (const plan::ProfileInput& in : plan.profiles[profile].inputs) {
      if (in.tensor != it->second) continue;
      switch (which) {
        case OptProfileSelector::kMIN:
          return in.min;
        case OptProfileSelector::kOPT:
          return in.opt;
        case OptProfileSelector::kMAX:
          return in.max;
      }
      return none;
    }
    return plan.tensors[it->second].dims;
  }
  bool isShapeValueInput(const char* name) const override { return shapeValueInput(name); }
  std::vector<int64_t> getShapeValues(const char* name) const override {
    const plan::ShapeValueInput* in = shapeValueInput(name);
    return in ? in->values : std::vector<int64_t>();
  }
  const char* getTarget() const override { return state_->plan.target.c_str(); }
  const IDevice& getDevice() const override { return device_; }
  EngineMemory getMemory() const override {
    EngineMemory memory;
    for (const auto& w : state_->deviceWeights) memory.weightBytes += w ? w->size() : 0;
    memory.contextBytes =
        std::max(state_->arenaBytes, state_->maxArenaBytes) + state_->workspaceBytes;
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
  const plan::ShapeValueInput* shapeValueInput(const char* name) const {
    auto it = name ? state_->ioTensors.find(name) : state_->ioTensors.end();
    return it == state_->ioTensors.end() ? nullptr
                                         : plan::findShapeValueInput(state_->plan, it->second);
  }
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
