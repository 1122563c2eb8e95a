#include "core/byte_io.h"

#include <bit>
#include <cstring>
#include <type_traits>

namespace kiln {

void ByteWriter::u32(uint32_t v) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void ByteWriter::u64(uint64_t v) {
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void ByteWriter::f32(float v) { u32(std::bit_cast<uint32_t>(v)); }

void ByteWriter::f64(double v) { u64(std::bit_cast<uint64_t>(v)); }

void ByteWriter::raw(const void* data, size_t size) {
  if (size == 0) return;
  const auto* p = static_cast<const uint8_t*>(data);
  out_.insert(out_.end(), p, p + size);
}

void ByteWriter::string(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  raw(s.data(), s.size());
}

void ByteWriter::blob(const uint8_t* data, size_t size) {
  u64(size);
  raw(data, size);
}

size_t ByteWriter::beginSection(uint32_t tag) {
  u32(tag);
  const size_t lengthAt = out_.size();
  u64(0);
  return lengthAt;
}

void ByteWriter::endSection(size_t sectionStart) {
  patchU64(sectionStart, out_.size() - (sectionStart + 8));
}

void ByteWriter::patchU64(size_t offset, uint64_t v) {
  for (int i = 0; i < 8; ++i) out_[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

std::string ByteReader::context(const char* field) const {
  std::string s = field;
  if (item_) {
    s += " of ";
    s += item_;
    if (index_ >= 0) s += " " + std::to_string(index_);
  }
  if (section_) s += std::string(" in section '") + section_ + "'";
  return s;
}

Status ByteReader::errorAt(size_t at, const std::string& what) const {
  std::string where;
  if (item_) {
    where = item_;
    if (index_ >= 0) where += " " + std::to_string(index_);
  }
  if (section_) where += (where.empty() ? "" : ", ") + std::string("section '") + section_ + "'";
  return corruptData(what + " at byte " + std::to_string(at) +
                     (where.empty() ? "" : " (" + where + ")"));
}

Status ByteReader::need(uint64_t n, const char* field) const {
  if (n <= remaining()) return Status::ok();
  return corruptData("truncated at byte " + std::to_string(offset()) + " while reading " +
                     context(field) + " (needs " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " left)");
}

Status ByteReader::u8(uint8_t& v, const char* field) {
  KILN_RETURN_IF_ERROR(need(1, field));
  v = data_[pos_++];
  return Status::ok();
}

template <class T>
Status ByteReader::littleEndian(T& v, const char* field) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(T) == sizeof(U));
  KILN_RETURN_IF_ERROR(need(sizeof(U), field));
  U u = 0;
  for (size_t i = 0; i < sizeof(U); ++i) u |= static_cast<U>(data_[pos_ + i]) << (8 * i);
  pos_ += sizeof(U);
  v = std::bit_cast<T>(u);
  return Status::ok();
}

Status ByteReader::u32(uint32_t& v, const char* field) { return littleEndian(v, field); }
Status ByteReader::u64(uint64_t& v, const char* field) { return littleEndian(v, field); }
Status ByteReader::i32(int32_t& v, const char* field) { return littleEndian(v, field); }
Status ByteReader::i64(int64_t& v, const char* field) { return littleEndian(v, field); }
Status ByteReader::f32(float& v, const char* field) { return littleEndian(v, field); }
Status ByteReader::f64(double& v, const char* field) { return littleEndian(v, field); }

Status ByteReader::boolean(bool& v, const char* field) {
  const size_t at = offset();
  uint8_t b = 0;
  KILN_RETURN_IF_ERROR(u8(b, field));
  if (b > 1)
    return errorAt(at, "invalid bool " + std::to_string(b) + " for " + field + " (must be 0 or 1)");
  v = b == 1;
  return Status::ok();
}

Status ByteReader::string(std::string& s, size_t maxBytes, const char* field) {
  const size_t at = offset();
  uint32_t n = 0;
  KILN_RETURN_IF_ERROR(u32(n, field));
  if (n > maxBytes)
    return errorAt(at, std::string(field) + " is " + std::to_string(n) +
                           " bytes long, more than the maximum " + std::to_string(maxBytes));
  KILN_RETURN_IF_ERROR(need(n, field));
  s.assign(reinterpret_cast<const char*>(data_ + pos_), n);
  pos_ += n;
  return Status::ok();
}

Status ByteReader::bytes(std::vector<uint8_t>& out, size_t n, const char* field) {
  KILN_RETURN_IF_ERROR(need(n, field));
  out.assign(data_ + pos_, data_ + pos_ + n);
  pos_ += n;
  return Status::ok();
}

Status ByteReader::blob(std::vector<uint8_t>& out, const char* field) {
  uint64_t n = 0;
  KILN_RETURN_IF_ERROR(u64(n, field));
  KILN_RETURN_IF_ERROR(need(n, field));
  return bytes(out, static_cast<size_t>(n), field);
}

Status ByteReader::count(uint32_t& n, size_t minElementBytes, const char* field) {
  const size_t at = offset();
  KILN_RETURN_IF_ERROR(u32(n, field));
  if (minElementBytes > 0 && n > remaining() / minElementBytes)
    return errorAt(at, std::string(field) + " " + std::to_string(n) + " needs at least " +
                           std::to_string(static_cast<uint64_t>(n) * minElementBytes) +
                           " bytes but only " + std::to_string(remaining()) + " remain");
  return Status::ok();
}

Status ByteReader::sub(size_t n, ByteReader& out, const char* field) {
  KILN_RETURN_IF_ERROR(need(n, field));
  out = ByteReader(data_ + pos_, n, offset());
  out.section_ = section_;
  out.item_ = item_;
  out.index_ = index_;
  pos_ += n;
  return Status::ok();
}

}  // namespace kiln
