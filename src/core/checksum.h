// CRC-64/XZ (ECMA-182 polynomial, reflected, init and final xor all ones): the plan file's
// checksum. A CRC rather than a plain hash because it is guaranteed to catch every error burst of
// up to 64 bits, which covers the usual damage (a few flipped or overwritten bytes in one place).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

// The CRC of [data, data + size). crc64(p, n) == crc64Update(crc64Update(kCrc64Init, p, k) ...)
// finalised with crc64Final, for streaming use.
uint64_t crc64(const void* data, size_t size);

constexpr uint64_t kCrc64Init = ~uint64_t{0};
uint64_t crc64Update(uint64_t state, const void* data, size_t size);
inline uint64_t crc64Final(uint64_t state) { return ~state; }

}  // namespace kiln
