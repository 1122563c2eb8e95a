// The device an engine runs on, as IEngine::getDevice() hands it out: the backend's memory,
// streams and graphs, with the engine's GPU made current before each call (so a program may use
// it from any thread, and engines on different GPUs do not mix).
#pragma once

#include "backends/backend.h"

namespace kiln {

class EngineDevice final : public IDevice {
 public:
  EngineDevice(const Backend& backend, int32_t index) : backend_(backend), index_(index) {}

  DeviceKind getKind() const override { return backend_.getKind(); }
  int32_t getIndex() const override { return index_ < 0 ? 0 : index_; }
  Status allocate(size_t bytes, const char* what,
                  std::unique_ptr<IDeviceBuffer>& buffer) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.allocate(bytes, what, buffer);
  }
  Status copyFromHost(void* device, const void* host, size_t bytes) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.copyFromHost(device, host, bytes);
  }
  Status copyToHost(void* host, const void* device, size_t bytes) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.copyToHost(host, device, bytes);
  }
  Status fill(void* device, int value, size_t bytes, Stream stream) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.fill(device, value, bytes, stream);
  }
  Status createStream(std::unique_ptr<IDeviceStream>& stream) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.createStream(stream);
  }
  Status createEvent(std::unique_ptr<IDeviceEvent>& event) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.createEvent(event);
  }
  Status captureGraph(Stream stream, const std::function<Status()>& enqueue,
                      std::unique_ptr<IDeviceGraph>& graph) const override {
    KILN_RETURN_IF_ERROR(backend_.activate(index_));
    return backend_.captureGraph(stream, enqueue, graph);
  }

 private:
  const Backend& backend_;
  int32_t index_;
};

}  // namespace kiln
