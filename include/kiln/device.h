// The device an engine runs on, for programs with no device code of their own (the command line,
// tests, language bindings): memory, copies, streams and graph capture. On a CPU engine, memory
// is host memory, copies are memcpy, streams are null and run synchronously, and graphs are not
// available. A program that has its own CUDA code may use cudaMalloc and its own streams instead:
// kiln only needs device pointers and a cudaStream_t.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

// Memory on a device that frees itself.
class IDeviceBuffer {
 public:
  virtual ~IDeviceBuffer() = default;
  virtual void* data() const = 0;
  virtual size_t size() const = 0;
};

// A stream of work on the device that destroys itself (a non-blocking cudaStream_t on CUDA).
class IDeviceStream {
 public:
  virtual ~IDeviceStream() = default;
  // What enqueue() takes.
  virtual Stream get() const = 0;
  // Waits for everything enqueued on it.
  virtual Status synchronize() = 0;
};

// A point in a stream's work whose time can be read once the work before it is done: a CUDA event
// on CUDA; on the CPU, where streams run synchronously, the steady clock read when it is recorded.
class IDeviceEvent {
 public:
  virtual ~IDeviceEvent() = default;
  // Marks the point after everything enqueued on `stream` so far.
  virtual Status record(Stream stream) = 0;
  // Waits until the work before the recorded point is done.
  virtual Status synchronize() = 0;
  // Milliseconds from `start` (an event of the same device, recorded earlier on the same or
  // another stream) to this one; both must be recorded and complete.
  virtual Status elapsedSince(const IDeviceEvent& start, double& ms) const = 0;
};

// Work enqueued on a stream, captured once and replayed (a CUDA graph).
class IDeviceGraph {
 public:
  virtual ~IDeviceGraph() = default;
  virtual Status launch(Stream stream) = 0;
};

class IDevice {
 public:
  virtual ~IDevice() = default;
  virtual DeviceKind getKind() const = 0;
  // Which device of its kind: the CUDA ordinal (what DLPack calls device_id), 0 on the CPU.
  virtual int32_t getIndex() const { return 0; }
  // `bytes` of device memory (0: an empty buffer); `what` names it in errors.
  virtual Status allocate(size_t bytes, const char* what,
                          std::unique_ptr<IDeviceBuffer>& buffer) const = 0;
  // Copies that wait for the copy (not for other work on other streams).
  virtual Status copyFromHost(void* device, const void* host, size_t bytes) const = 0;
  virtual Status copyToHost(void* host, const void* device, size_t bytes) const = 0;
  // Sets `bytes` bytes to `value`, in stream order.
  virtual Status fill(void* device, int value, size_t bytes, Stream stream) const = 0;
  virtual Status createStream(std::unique_ptr<IDeviceStream>& stream) const = 0;
  // An event for timing work on this device's streams (made outside any timed or captured work).
  virtual Status createEvent(std::unique_ptr<IDeviceEvent>& event) const = 0;
  // Captures what `enqueue` puts on `stream` (a stream made by createStream) into a graph.
  // kUnsupported where the device has no graphs (the CPU).
  virtual Status captureGraph(Stream stream, const std::function<Status()>& enqueue,
                              std::unique_ptr<IDeviceGraph>& graph) const = 0;
};

// How many devices of `kind` this kiln can run on: 1 for the CPU; for CUDA the usable GPUs, 0 where
// kiln was built without the CUDA backend or the machine has none (then *why, if given, says why).
int32_t deviceCount(DeviceKind kind, std::string* why = nullptr);

}  // namespace kiln
