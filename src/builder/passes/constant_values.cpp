#include "builder/passes/constant_values.h"

#include <cstring>

#include "builder/passes/graph_edit.h"
#include "kiln/float16.h"

namespace kiln::passes {
namespace {

template <typename T>
T load(const uint8_t* p, int64_t k) {
  T v;
  std::memcpy(&v, p + k * int64_t(sizeof(T)), sizeof(T));
  return v;
}

bool sized(const GraphTensor& t) {
  const int64_t n = volume(t.shape.dims);
  return isConstant(t) && n >= 0 &&
         t.constant->size() == static_cast<size_t>(n) * dataTypeSize(t.shape.type);
}

}  // namespace

double constantValue(const GraphTensor& t, int64_t k) {
  const uint8_t* p = t.constant->data();
  switch (t.shape.type) {
    case DataType::kFLOAT:
      return load<float>(p, k);
    case DataType::kHALF:
      return halfToFloat(load<uint16_t>(p, k));
    case DataType::kBF16:
      return bf16ToFloat(load<uint16_t>(p, k));
    case DataType::kINT8:
      return load<int8_t>(p, k);
    case DataType::kINT32:
      return load<int32_t>(p, k);
    case DataType::kINT64:
      return double(load<int64_t>(p, k));
    case DataType::kBOOL:
      return p[k] ? 1 : 0;
  }
  return 0;
}

bool constantIsAll(const GraphTensor& t, double value) {
  if (!sized(t)) return false;
  const int64_t n = volume(t.shape.dims);
  if (n == 0) return false;
  for (int64_t k = 0; k < n; ++k) {
    if (constantValue(t, k) != value) return false;
  }
  return true;
}

bool floatValues(const GraphTensor& t, std::vector<double>& out) {
  if (t.shape.type != DataType::kFLOAT || !sized(t)) return false;
  const int64_t n = volume(t.shape.dims);
  out.resize(size_t(n));
  for (int64_t k = 0; k < n; ++k) out[size_t(k)] = load<float>(t.constant->data(), k);
  return true;
}

}  // namespace kiln::passes
