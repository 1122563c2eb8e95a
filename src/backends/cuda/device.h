// The few CUDA runtime services the engine needs outside kernels: finding the GPU, device memory
// that frees itself, streams, copies and event timing. No CUDA header here: the runtime and the
// builder include this without the toolkit's headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/cuda/non_copyable.h"
#include "kiln/status.h"

namespace kiln::cuda {

struct DeviceInfo {
  int index = -1;
  std::string name;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  size_t totalMemory = 0;
};

// Number of usable GPUs; 0 (never an error) where there is no driver or no device.
int deviceCount();
// Why deviceCount() is 0, for skip messages: the CUDA runtime's own words.
std::string noDeviceReason();
Status getDeviceInfo(int index, DeviceInfo& info);
// The L2 cache of the calling thread's current device, in bytes.
Status currentL2CacheBytes(int64_t& bytes);
// "cuda:sm_90" for a device of compute capability 9.0: what a plan built on it records.
std::string targetName(const DeviceInfo& info);
// Makes `index` the calling thread's current device.
Status setDevice(int index);
Status currentDevice(int& index);

// Device memory that frees itself (cudaMalloc / cudaFree).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Frees what was held, then allocates `bytes` (0: holds nothing). `what` names it in errors.
  Status allocate(size_t bytes, const std::string& what);
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// A stream that destroys itself (non-blocking with respect to the legacy default stream).
class StreamHandle : NonCopyable {
 public:
  ~StreamHandle();
  Status create();
  void* get() const { return stream_; }

 private:
  void* stream_ = nullptr;
};

// Synchronous copies (they wait for the copy, not for other work on other streams).
Status copyToDevice(void* device, const void* host, size_t bytes);
Status copyToHost(void* host, const void* device, size_t bytes);
// False for device memory (cudaMemoryTypeDevice); true for host memory, registered or not, and
// managed memory.
bool isHostReadable(const void* address);
// Stream-ordered copies and fills.
Status copyAsync(void* dst, const void* src, size_t bytes, void* stream);
Status fillBytesAsync(void* device, int value, size_t bytes, void* stream);
Status synchronize(void* stream);

// One event that destroys itself, for timing (cudaEventCreate's default flags keep timing on).
class EventHandle : NonCopyable {
 public:
  ~EventHandle();
  Status create();
  Status record(void* stream);
  Status synchronize();
  // Milliseconds from `start` to this event, both complete.
  Status elapsedSince(const EventHandle& start, double& ms) const;

 private:
  void* event_ = nullptr;
};

// Times work enqueued on a stream with a pair of events: start(), enqueue, stop() gives ms.
class EventTimer : NonCopyable {
 public:
  ~EventTimer();
  Status start(void* stream);
  // Records the end, waits for it and returns the elapsed milliseconds.
  Status stop(void* stream, double& ms);

 private:
  Status ensureEvents();
  void* begin_ = nullptr;
  void* end_ = nullptr;
};

}  // namespace kiln::cuda
