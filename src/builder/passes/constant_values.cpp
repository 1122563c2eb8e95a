#include "builder/passes/constant_values.h"

#include <cstring>

#include "builder/passes/graph_edit.h"

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
  return readElement(t.constant->data(), t.shape.type, k);
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
