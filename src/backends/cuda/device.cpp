#include "backends/cuda/device.h"

#include <cuda_runtime.h>

#include <utility>

#include "backends/cuda/cuda_check.h"

namespace kiln::cuda {

int deviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error for later calls
    return 0;
  }
  return count;
}

std::string noDeviceReason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (error != cudaSuccess)
    return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
  if (count == 0) return "the CUDA runtime sees no GPU";
  return "";
}

Status getDeviceInfo(int index, DeviceInfo& info) {
  const int count = deviceCount();
  if (index < 0 || index >= count) {
    return invalidArgument("no CUDA device " + std::to_string(index) + " (this machine has " +
                           std::to_string(count) + (count == 1 ? " GPU" : " GPUs") +
                           (count == 0 ? ": " + noDeviceReason() : std::string()) + ")");
  }
  cudaDeviceProp prop{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  info.index = index;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.totalMemory = prop.totalGlobalMem;
  return Status::ok();
}

Status currentL2CacheBytes(int64_t& bytes) {
  int device = 0, l2 = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  bytes = l2;
  return Status::ok();
}

std::string targetName(const DeviceInfo& info) {
  return "cuda:sm_" + std::to_string(info.major) + std::to_string(info.minor);
}

Status setDevice(int index) {
  KILN_CUDA_CHECK(cudaSetDevice(index));
  return Status::ok();
}

Status currentDevice(int& index) {
  KILN_CUDA_CHECK(cudaGetDevice(&index));
  return Status::ok();
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Status DeviceBuffer::allocate(size_t bytes, const std::string& what) {
  if (data_) cudaFree(data_);
  data_ = nullptr;
  size_ = 0;
  if (bytes == 0) return Status::ok();
  const cudaError_t error = cudaMalloc(&data_, bytes);
  if (error != cudaSuccess) {
    data_ = nullptr;
    cudaGetLastError();
    return deviceError("cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                       " failed: " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error));
  }
  size_ = bytes;
  return Status::ok();
}

StreamHandle::~StreamHandle() {
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status StreamHandle::create() {
  cudaStream_t s = nullptr;
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
  return Status::ok();
}

Status copyToDevice(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return Status::ok();
  KILN_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  return Status::ok();
}

bool isHostReadable(const void* address) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, address) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer is plain host memory; clear the sticky error
    return true;
  }
  return attributes.type != cudaMemoryTypeDevice;
}

Status copyToHost(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return Status::ok();
  KILN_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  return Status::ok();
}

Status copyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return Status::ok();
  KILN_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status fillBytesAsync(void* device, int value, size_t bytes, void* stream) {
  if (bytes == 0) return Status::ok();
  KILN_CUDA_CHECK(cudaMemsetAsync(device, value, bytes, static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status synchronize(void* stream) {
  KILN_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

EventHandle::~EventHandle() {
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

Status EventHandle::create() {
  cudaEvent_t e = nullptr;
  KILN_CUDA_CHECK(cudaEventCreate(&e));
  event_ = e;
  return Status::ok();
}

Status EventHandle::record(void* stream) {
  KILN_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status EventHandle::synchronize() {
  KILN_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
  return Status::ok();
}

Status EventHandle::elapsedSince(const EventHandle& start, double& ms) const {
  float elapsed = 0;
  KILN_CUDA_CHECK(cudaEventElapsedTime(&elapsed, static_cast<cudaEvent_t>(start.event_),
                                       static_cast<cudaEvent_t>(event_)));
  ms = elapsed;
  return Status::ok();
}

EventTimer::~EventTimer() {
  if (begin_) cudaEventDestroy(static_cast<cudaEvent_t>(begin_));
  if (end_) cudaEventDestroy(static_cast<cudaEvent_t>(end_));
}

Status EventTimer::ensureEvents() {
  if (!begin_) {
    cudaEvent_t e = nullptr;
    KILN_CUDA_CHECK(cudaEventCreate(&e));
    begin_ = e;
  }
  if (!end_) {
    cudaEvent_t e = nullptr;
    KILN_CUDA_CHECK(cudaEventCreate(&e));
    end_ = e;
  }
  return Status::ok();
}

Status EventTimer::start(void* stream) {
  KILN_RETURN_IF_ERROR(ensureEvents());
  KILN_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(begin_), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status EventTimer::stop(void* stream, double& ms) {
  KILN_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(end_), static_cast<cudaStream_t>(stream)));
  KILN_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end_)));
  float elapsed = 0;
  KILN_CUDA_CHECK(cudaEventElapsedTime(&elapsed, static_cast<cudaEvent_t>(begin_),
                                       static_cast<cudaEvent_t>(end_)));
  ms = elapsed;
  return Status::ok();
}

}  // namespace kiln::cuda
