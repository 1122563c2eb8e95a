#include "core/random_fill.h"

#include "kiln/float16.h"

namespace kiln {

void fillRandom(void* data, DataType type, int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> real(-1.f, 1.f);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t i = 0; i < count; ++i) {
    switch (type) {
      case DataType::kFLOAT:
        static_cast<float*>(data)[i] = real(rng);
        break;
      case DataType::kHALF:
        static_cast<uint16_t*>(data)[i] = floatToHalf(real(rng));
        break;
      case DataType::kBF16:
        static_cast<uint16_t*>(data)[i] = floatToBf16(real(rng));
        break;
      case DataType::kINT8:
        static_cast<int8_t*>(data)[i] = static_cast<int8_t>(small(rng));
        break;
      case DataType::kINT32:
        static_cast<int32_t*>(data)[i] = small(rng);
        break;
      case DataType::kINT64:
        static_cast<int64_t*>(data)[i] = small(rng);
        break;
      case DataType::kBOOL:
        static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(small(rng) & 1);
        break;
    }
  }
}

}  // namespace kiln
