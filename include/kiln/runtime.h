// Running plans: Runtime -> Engine (shared, immutable) -> ExecutionContext (one per thread).
//
// Lifecycle follows XNNPACK's create -> setup -> run: create a context, bind every input and
// output with setTensorAddress(), then enqueue() as often as needed. One context is used by one
// thread at a time; several contexts of one engine may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/device.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

enum class TensorIOMode : int32_t { kINPUT = 0, kOUTPUT = 1 };

// One layer's time in one profiled enqueue (IExecutionContext::setProfiler).
struct LayerTime {
  int32_t index = 0;           // the layer's step, in execution order
  const char* layerName = "";  // valid during the call only, as are the other strings
  const char* layerType = "";  // "Convolution", ...; "Plugin" for plugin layers
  const char* tactic = "";     // the implementation the plan chose; a plugin layer's plugin name
  double startMs = 0;          // from the start of the enqueue's first layer
  double durationMs = 0;
  // The host time enqueue() spent putting this layer's work on the stream (its kernels' launches,
  // a library's call, a plugin's enqueue): where a layer-by-layer enqueue's host cost goes. On the
  // CPU backend, which runs a layer before returning, it is the layer's whole time.
  double hostMs = 0;
};

// Per-layer timing, in the manner of TensorRT's IProfiler.
class IProfiler {
 public:
  virtual ~IProfiler() = default;
  // Called once per layer, in execution order, on the thread that called enqueue(), after the
  // profiled enqueue's work is done.
  virtual void reportLayerTime(const LayerTime& time) = 0;
};

// What an engine and each of its contexts hold on the engine's device.
struct EngineMemory {
  uint64_t weightBytes = 0;   // the weights uploaded once at load (0 on the CPU: read in place)
  uint64_t contextBytes = 0;  // per context: its activation arena and workspace (plugins' own
                              // persistent allocations come on top)
};

// What a context's CUDA graphs did (IExecutionContext::setCudaGraphs), counted since it was made.
struct CudaGraphStats {
  int64_t captured = 0;  // graphs captured (one per input shapes and addresses seen twice)
  int64_t replayed = 0;  // enqueues that launched a captured graph
  int64_t direct = 0;    // enqueues that ran layer by layer while graphs were on
  int64_t failed = 0;    // captures that failed: those shapes and addresses then run directly
  int32_t held = 0;      // graphs the context holds now (at most 8, least recently used dropped)
};

class IExecutionContext {
 public:
  virtual ~IExecutionContext() = default;
  // Memory for an input or output, in the engine's device memory (host memory on the CPU).
  // It must hold the tensor's bytes in the engine's I/O type and format (see IEngine).
  virtual Status setTensorAddress(const char* name, void* address) = 0;

  // Dynamic shapes (plans built with optimization profiles; DESIGN.md §7). A context starts on
  // profile 0. Selecting a profile forgets the input shapes set before; any number of contexts
  // may use one profile, each with its own memory, sized for that profile's max.
  virtual Status setOptimizationProfile(int32_t index) = 0;
  virtual int32_t getOptimizationProfile() const = 0;
  // The shape of a dynamic input for the next enqueues; it must lie inside the selected
  // profile's [min, max] (the error names input, axis, value and range, and a profile that
  // fits). A fixed input accepts only its own dims. Kernels for the new shapes are made here (or
  // reused), never inside enqueue().
  virtual Status setInputShape(const char* name, const Dims& dims) = 0;
  // An input's or output's dims as they are now: -1 where they depend on an input shape not set
  // yet (or when the shapes set break a rule: inferShapes says which). nbDims -1: unknown name.
  virtual Dims getTensorShape(const char* name) const = 0;
  // The dynamic inputs whose shape is still missing, in `missing`; an error when the shapes set
  // are inconsistent (inputs sharing a named dimension differ, or a layer refuses them).
  virtual Status inferShapes(std::vector<std::string>& missing) const = 0;
  // The address last set for an input or output, or nullptr (unknown name, or none set yet).
  virtual void* getTensorAddress(const char* name) const = 0;
  // Runs the network. Asynchronous on `stream` on CUDA; synchronous on the CPU (stream ignored).
  virtual Status enqueue(Stream stream) = 0;
  // With a profiler set, each enqueue() records a device event before every layer and after the
  // last (CUDA events; the steady clock on the CPU), waits for the stream and reports every
  // layer's time: a profiled enqueue is synchronous and must not be captured in a CUDA graph.
  // nullptr (the default) turns profiling off, which leaves enqueue() as it was. Not while this
  // context is enqueuing on another thread.
  virtual Status setProfiler(IProfiler* profiler) = 0;
  virtual IProfiler* getProfiler() const = 0;
  // CUDA graphs kept by the context. On, enqueue() replays a graph of the whole network for the
  // selected profile, input shapes and tensor addresses: the first enqueue of such a combination
  // runs layer by layer (kernels may set themselves up lazily), the second captures a graph and
  // launches it, later ones only launch it. Changing a shape or an address picks or makes another
  // graph; nothing is allocated on the device for one. A combination whose capture fails (a
  // plugin that synchronizes, say) runs layer by layer from then on, and the log says why once.
  // Enqueues on stream 0, on a stream the caller is capturing itself, or with a profiler set, run
  // layer by layer. kUnsupported on the CPU. Not while this context is enqueuing on another
  // thread.
  // The default: on for a CUDA engine whose plan holds no plugin layer (a replay launches none of
  // a plugin's enqueue() calls, so plugins keep the per-enqueue contract unless asked), and then
  // automatic: it turns itself off, with a log line, when more graphs were captured than a
  // context keeps while each was launched fewer than four times (shapes or addresses that keep
  // changing). setCudaGraphs(true) keeps graphs on whatever they pay; false runs layer by layer;
  // the environment variable KILN_CUDA_GRAPHS=0 makes layer by layer every context's default.
  // The enqueue that captures is the one that allocates (the graph, in the CUDA driver); others
  // allocate nothing.
  virtual Status setCudaGraphs(bool enabled) = 0;
  // Whether enqueue() uses graphs now (the default, setCudaGraphs, or automatic graphs given up).
  virtual bool getCudaGraphs() const = 0;
  virtual CudaGraphStats getCudaGraphStats() const = 0;
};

class IEngine {
 public:
  virtual ~IEngine() = default;
  virtual int32_t getNbIOTensors() const = 0;
  virtual const char* getIOTensorName(int32_t index) const = 0;
  virtual TensorIOMode getTensorIOMode(const char* name) const = 0;
  // Dims, type and format the caller's buffer must have; dims.nbDims == -1 for an unknown name.
  // A dimension that varies in some optimization profile is -1 (getTensorShape() on a context
  // gives the value for the shapes it was set to).
  virtual PluginTensorDesc getTensorDesc(const char* name) const = 0;
  // Optimization profiles the plan was built with; 1 for a plan without dynamic inputs (its one
  // implicit profile).
  virtual int32_t getNbOptimizationProfiles() const = 0;
  // An input's min, opt or max shape in a profile (its own dims for a fixed input); nbDims -1 for
  // an unknown name or profile.
  virtual Dims getProfileShape(const char* name, int32_t profile,
                               OptProfileSelector which) const = 0;
  // Shape-value inputs (ITensor::setShapeValues): their address is host memory on every backend,
  // and enqueue() fails unless they hold the values the plan was built for (getShapeValues).
  virtual bool isShapeValueInput(const char* name) const = 0;
  virtual std::vector<int64_t> getShapeValues(const char* name) const = 0;
  // "cpu" or "cuda:sm_90", as recorded in the plan.
  virtual const char* getTarget() const = 0;
  // The device the engine runs on: memory for its inputs and outputs, streams, graphs.
  virtual const IDevice& getDevice() const = 0;
  // Device memory of the engine's weights and of each context.
  virtual EngineMemory getMemory() const = 0;
  // Each context owns its activation memory and its plugin objects.
  virtual Status createExecutionContext(std::unique_ptr<IExecutionContext>& context) = 0;
  // JSON describing layers, tactics, formats, timings, the memory plan and plugin records.
  virtual std::string inspect() const = 0;
};

class IRuntime {
 public:
  virtual ~IRuntime() = default;
  // Validates the whole plan before using any of it; plugins must already be registered.
  virtual Status deserializeEngine(const void* plan, size_t size,
                                   std::unique_ptr<IEngine>& engine) = 0;
};

std::unique_ptr<IRuntime> createRuntime();

// The JSON that IEngine::inspect() gives, from plan bytes alone: the plan is read and validated
// but no engine is made, so its plugins need not be registered (`kiln inspect`).
Status inspectPlan(const void* plan, size_t size, std::string& json);

}  // namespace kiln
