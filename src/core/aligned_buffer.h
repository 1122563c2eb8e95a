// A heap buffer aligned for vector loads, for arenas, workspaces and timing buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace kiln {

class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes) { resize(bytes); }
  // Discards the contents. Zero bytes gives a null data().
  void resize(size_t bytes) {
    data_.reset(bytes ? static_cast<uint8_t*>(::operator new(bytes, std::align_val_t(kAlignment)))
                      : nullptr);
    size_ = bytes;
  }
  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(kAlignment)); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

}  // namespace kiln
