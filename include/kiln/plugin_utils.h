// Header-only helpers for plugin authors: bounds-checked (de)serialization of plain values and
// field look-up. Compiled into the plugin, so they add nothing to the ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/plugin.h"

namespace kiln {

// Writes trivially copyable values little-endian-as-in-memory into a caller's buffer. Once a
// write would overflow, nothing more is written and ok() stays false.
class BufferWriter {
 public:
  BufferWriter(void* buffer, size_t length) : p_(static_cast<uint8_t*>(buffer)), left_(length) {}
  template <typename T>
  void write(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    writeBytes(&value, sizeof(T));
  }
  // A string as a uint32 length followed by its bytes.
  void writeString(const std::string& s) {
    write(static_cast<uint32_t>(s.size()));
    writeBytes(s.data(), s.size());
  }
  void writeBytes(const void* data, size_t n) {
    if (!ok_ || n > left_) {
      ok_ = false;
      return;
    }
    if (n) std::memcpy(p_, data, n);
    p_ += n;
    left_ -= n;
  }
  bool ok() const { return ok_; }
  size_t remaining() const { return left_; }

 private:
  uint8_t* p_;
  size_t left_;
  bool ok_ = true;
};

// Reads what BufferWriter wrote; every read checks the remaining length first.
class BufferReader {
 public:
  BufferReader(const void* data, size_t length)
      : p_(static_cast<const uint8_t*>(data)), left_(data ? length : 0) {}
  template <typename T>
  bool read(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    return readBytes(&value, sizeof(T));
  }
  bool readString(std::string& s, size_t maxLength = 1 << 20) {
    uint32_t n = 0;
    if (!read(n) || n > maxLength || n > left_) return ok_ = false;
    s.assign(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool readBytes(void* out, size_t n) {
    if (!ok_ || n > left_) return ok_ = false;
    if (n) std::memcpy(out, p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }
  bool ok() const { return ok_; }
  // True when everything was read and nothing is left over.
  bool finished() const { return ok_ && left_ == 0; }

 private:
  const uint8_t* p_;
  size_t left_;
  bool ok_ = true;
};

// The field called `name`, or nullptr.
inline const PluginField* findPluginField(const PluginFieldCollection* fields, const char* name) {
  if (!fields || !name || fields->nbFields < 0 || (fields->nbFields > 0 && !fields->fields))
    return nullptr;
  for (int32_t i = 0; i < fields->nbFields; ++i) {
    const PluginField& f = fields->fields[i];
    if (f.name && std::strcmp(f.name, name) == 0) return &f;
  }
  return nullptr;
}

// A field's text for kSTRING fields (empty string for any other type or a malformed field).
inline std::string pluginFieldString(const PluginField& f) {
  if (f.type != PluginFieldType::kSTRING || !f.data || f.length < 0) return {};
  const char* s = static_cast<const char*>(f.data);
  size_t n = 0;
  while (n < static_cast<size_t>(f.length) && s[n] != '\0') ++n;  // tolerate a trailing NUL
  return std::string(s, n);
}

// A description for one fixed shape: min, opt and max all equal to desc.dims (tests, harnesses,
// and a plugin that hands its configure logic a static shape).
inline DynamicPluginTensorDesc staticPluginTensorDesc(const PluginTensorDesc& desc) {
  return DynamicPluginTensorDesc{desc, desc.dims, desc.dims, desc.dims};
}

// The same for `count` descriptions (nullptr stays a null array).
inline std::vector<DynamicPluginTensorDesc> staticPluginTensorDescs(const PluginTensorDesc* descs,
                                                                    int32_t count) {
  std::vector<DynamicPluginTensorDesc> out;
  for (int32_t i = 0; descs && i < count; ++i) out.push_back(staticPluginTensorDesc(descs[i]));
  return out;
}

}  // namespace kiln
