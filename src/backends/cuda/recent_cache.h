// A small direct-mapped cache of values made from short keys of machine words, for host objects
// that are costly to make on every launch but depend only on their key: cuDNN's variant packs
// (cudnn_graph_ops.cpp), which hold nothing but a call's tensor pointers, unique ids and
// workspace. A context runs its steps on the same addresses enqueue after enqueue, so the pack of
// the last call with the same key is the one to use again, and making it (a descriptor allocated,
// three attributes, finalized) is left to the first call.
//
// Not thread-safe: keep one per thread (thread_local), so concurrent contexts never share one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace kiln::cuda {

template <size_t kMaxWords>
struct WordKey {
  std::array<uint64_t, kMaxWords> words{};
  size_t count = 0;

  bool push(uint64_t w) {
    if (count == kMaxWords) return false;
    words[count++] = w;
    return true;
  }
  bool operator==(const WordKey& o) const {
    if (count != o.count) return false;
    for (size_t i = 0; i < count; ++i)
      if (words[i] != o.words[i]) return false;
    return true;
  }
  size_t hash() const {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ count;
    for (size_t i = 0; i < count; ++i) h = (h ^ words[i]) * 0x100000001b3ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

template <class Key, class Value, size_t kSlots>
class RecentCache {
 public:
  // The value made for `key`, made by make(value) on a miss (replacing whatever shared the slot);
  // nullptr when make fails (the slot is then left empty). Valid until the next get().
  template <class Make>
  Value* get(const Key& key, Make&& make) {
    Slot& slot = slots_[key.hash() % kSlots];
    if (slot.value && slot.key == key) {
      ++hits_;
      return slot.value.get();
    }
    slot.value.reset();
    auto value = std::make_unique<Value>();
    if (!make(*value)) return nullptr;
    slot.key = key;
    slot.value = std::move(value);
    ++misses_;
    return slot.value.get();
  }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    Key key;
    std::unique_ptr<Value> value;
  };
  std::array<Slot, kSlots> slots_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace kiln::cuda
