#include "core/checksum.h"

namespace kiln {
namespace {

constexpr uint64_t kPolyReflected = 0xC96C5795D7870F42ull;

// Slicing-by-8 tables: t[k][b] is the CRC of byte b followed by k zero bytes, so eight input
// bytes are folded in with eight look-ups instead of eight dependent steps. Weights make plans
// large, and the whole file is checked on every load. (Plain arrays: std::array's operator[] is
// a call in unoptimised builds, where the tests run under sanitizers.)
struct Tables {
  uint64_t t[8][256];
};

constexpr Tables makeTables() {
  Tables tables{};
  auto& t = tables.t;
  for (uint64_t b = 0; b < 256; ++b) {
    uint64_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolyReflected : 0);
    t[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k)
    for (int b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return tables;
}

constexpr Tables kTables = makeTables();

}  // namespace

uint64_t crc64Update(uint64_t crc, const void* data, size_t size) {
  const auto& t = kTables.t;
  const auto* p = static_cast<const uint8_t*>(data);
  while (size >= 8) {
    uint64_t word = 0;  // little-endian load, whatever the host
    for (int i = 0; i < 8; ++i) word |= static_cast<uint64_t>(p[i]) << (8 * i);
    crc ^= word;
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^
          t[4][(crc >> 24) & 0xff] ^ t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^
          t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
    p += 8;
    size -= 8;
  }
  while (size--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
  return crc;
}

uint64_t crc64(const void* data, size_t size) {
  return crc64Final(crc64Update(kCrc64Init, data, size));
}

}  // namespace kiln
