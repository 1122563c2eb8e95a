// A backend as the builder and the runtime see it, in the spirit of ggml's backend interface: the
// tactics it has for each op, its memory and copies, how candidates are timed on it, and what each
// execution context owns on it. The builder and the runtime hold a `const Backend&` and never ask
// which device it is; the CPU backend is always built, the CUDA backend joins when nvcc is found
// (backend_registry.cpp is the only place that knows which exist).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "backends/kernel.h"
#include "kiln/device.h"
#include "kiln/plugin.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

// Times candidates in the builder: a stream (CUDA) and library handles of its own, and a clock
// (CUDA events; the CPU's steady clock).
class Timer {
 public:
  virtual ~Timer() = default;
  // Where timed kernels and plugins run.
  virtual const RunContext& context() = 0;
  // Creates the cuBLAS/cuDNN handles now, outside any timed run.
  virtual Status prepareLibraries() = 0;
  // Median milliseconds of `run` over `runs` timed runs after `warmup` untimed ones; the first
  // failure stops the measurement and is returned.
  virtual Status median(int warmup, int runs, const std::function<Status()>& run, double& ms) = 0;
};

// What one execution context owns on its backend besides its arena and workspace: library
// handles (made up front when a kernel uses them, never inside enqueue, which may be under graph
// capture) and the resources its plugins' context objects are given.
class ContextResources {
 public:
  virtual ~ContextResources() = default;
  virtual IPluginContextResources* pluginResources() = 0;
  // How this context's kernels run on `stream`.
  virtual RunContext runContext(Stream stream) = 0;
};

class Backend : public IDevice {
 public:
  // "CPU", "CUDA": for messages. A backend is named by the kind of device it runs on (there is
  // one backend per kind, see backendFor).
  const char* name() const { return getKind() == DeviceKind::kCUDA ? "CUDA" : "CPU"; }
  // Build targets ("cpu"; "cuda", "cuda:N"): whether `target` names this backend; resolving it
  // checks that the device is there and says what the plan records ("cpu", "cuda:sm_90").
  virtual bool buildsFor(const std::string& target) const = 0;
  virtual Status resolveBuildTarget(const std::string& target, int32_t& deviceIndex,
                                    std::string& planTarget) const = 0;
  // Plan targets: whether a plan recording `planTarget` is this backend's, and the device of this
  // machine (the calling thread's current one) that runs it, or why none can.
  virtual bool runsPlanTarget(const std::string& planTarget) const = 0;
  virtual Status openPlanTarget(const std::string& planTarget, int32_t& deviceIndex) const = 0;
  // Devices of this kind on this machine; 0 with *why saying why there are none.
  virtual int32_t deviceCount(std::string* why) const = 0;
  // Makes `deviceIndex` the calling thread's device (before allocating or enqueuing for it).
  virtual Status activate(int32_t deviceIndex) const = 0;
  // The device the timing cache keys its entries by ("cpu:<model>", "cuda:NVIDIA_H200:sm_90").
  virtual std::string timingDeviceName() const = 0;
  // True where kernels read host memory directly (the CPU): weights need no upload.
  virtual bool usesHostMemory() const = 0;
  // Whether the host may read `address` (host memory, pinned or pageable, or managed memory): a
  // shape-value input's values are read there, and a device pointer must be refused, not read.
  virtual bool isHostReadable(const void* address) const = 0;
  // Whether the caller is capturing `stream` into a graph of its own (false where the device has
  // no graphs): work enqueued there is recorded, not run.
  virtual bool isCapturing(Stream stream) const = 0;

  // The backend's implementations of an op, fastest first, the plain reference last.
  virtual std::span<const Tactic> tactics(LayerType type) const = 0;

  virtual Status createTimer(std::unique_ptr<Timer>& timer) const = 0;
  virtual Status createContextResources(int32_t deviceIndex, bool usesLibraries,
                                        std::unique_ptr<ContextResources>& out) const = 0;
};

// The CPU backend (always there).
const Backend& cpuBackend();
// The backend of a device kind, or nullptr when this build has none.
const Backend* backendFor(DeviceKind device);
// Every backend of this build, the CPU first.
std::span<const Backend* const> allBackends();
// The backend that builds for `target` ("cpu", "cuda", "cuda:N"), or an error that names the
// targets this build knows.
Status backendForBuildTarget(const std::string& target, const Backend*& backend);
// The backend whose plans record `planTarget`, or an error that says what to rebuild for.
Status backendForPlanTarget(const std::string& planTarget, const Backend*& backend);

}  // namespace kiln
