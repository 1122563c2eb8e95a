// Little-endian byte writing and bounds-checked reading, for kiln's binary formats (the plan file).
// The byte order is fixed by the format, not by the host: values are assembled byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

  size_t size() const { return out_.size(); }

  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f32(float v);  // IEEE bits, so NaN payloads and -0 survive
  void f64(double v);
  void boolean(bool v) { u8(v ? 1 : 0); }
  void raw(const void* data, size_t size);
  // u32 length + bytes; the caller has checked the length against the format's maximum.
  void string(const std::string& s);
  // u64 length + bytes.
  void blob(const uint8_t* data, size_t size);

  // Writes `tag` and a length placeholder; endSection() fills in the length of what came between.
  size_t beginSection(uint32_t tag);
  void endSection(size_t sectionStart);

  // Overwrites 8 bytes at `offset` (which must already exist).
  void patchU64(size_t offset, uint64_t v);

 private:
  std::vector<uint8_t>& out_;
};

// Reads from [data, data + size) and never outside it. Offsets in errors are absolute (the
// reader's base offset plus its position), so a sub-reader over one section reports positions in
// the whole file. Every error is a kCorruptData Status naming the byte, the field and the context.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size, size_t baseOffset = 0)
      : data_(data), size_(size), base_(baseOffset) {}

  size_t offset() const { return base_ + pos_; }
  size_t remaining() const { return size_ - pos_; }
  bool atEnd() const { return pos_ == size_; }

  // Context for error messages: which section and which item of it is being read. The pointers
  // must outlive the reader (string literals); nothing is formatted until an error happens.
  void setSection(const char* section) { section_ = section; }
  void setItem(const char* item, int64_t index) {
    item_ = item;
    index_ = index;
  }

  Status u8(uint8_t& v, const char* field);
  Status u32(uint32_t& v, const char* field);
  Status u64(uint64_t& v, const char* field);
  Status i32(int32_t& v, const char* field);
  Status i64(int64_t& v, const char* field);
  Status f32(float& v, const char* field);
  Status f64(double& v, const char* field);
  // Only 0 and 1 are bools; anything else is corruption (and loading it into a bool would be UB).
  Status boolean(bool& v, const char* field);
  // u32 length (at most maxBytes) + bytes.
  Status string(std::string& s, size_t maxBytes, const char* field);
  // Exactly n bytes.
  Status bytes(std::vector<uint8_t>& out, size_t n, const char* field);
  // u64 length + bytes.
  Status blob(std::vector<uint8_t>& out, const char* field);
  // A u32 element count, refused unless count * minElementBytes fits in what remains, so that no
  // corrupted count can make the caller allocate more than the input could describe.
  Status count(uint32_t& n, size_t minElementBytes, const char* field);
  // A u32 holding an enum value in [0, enumCount).
  template <typename E>
  Status enumValue(E& v, int32_t enumCount, const char* field) {
    const size_t at = offset();
    uint32_t raw = 0;
    KILN_RETURN_IF_ERROR(u32(raw, field));
    if (raw >= static_cast<uint32_t>(enumCount))
      return errorAt(at, "invalid " + std::string(field) + " value " + std::to_string(raw) +
                             " (valid: 0.." + std::to_string(enumCount - 1) + ")");
    v = static_cast<E>(raw);
    return Status::ok();
  }

  // Splits off the next n bytes as a reader of their own (same context), advancing past them.
  Status sub(size_t n, ByteReader& out, const char* field);

  // A kCorruptData error at absolute byte `at`, with this reader's context.
  Status errorAt(size_t at, const std::string& what) const;

 private:
  // The next sizeof(T) (4 or 8) bytes, little-endian, as T: an integer, or a float's IEEE bits.
  template <class T>
  Status littleEndian(T& v, const char* field);

  Status need(uint64_t n, const char* field) const;
  std::string context(const char* field) const;

  const uint8_t* data_;
  size_t size_;
  size_t base_;
  size_t pos_ = 0;
  const char* section_ = nullptr;
  const char* item_ = nullptr;
  int64_t index_ = -1;
};

}  // namespace kiln
