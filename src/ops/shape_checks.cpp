#include "ops/shape_checks.h"

namespace kiln::shape {

bool floatsInFp32(const char* op, std::vector<DataType>& types, std::string& why) {
  for (DataType& t : types) {
    if (!isFloatType(t)) {
      why = std::string("kiln's ") + op + " layer does not take " + dataTypeName(t) + " inputs";
      return false;
    }
    t = DataType::kFLOAT;
  }
  return true;
}

bool movedFloatsInFp32(std::vector<DataType>& types) {
  for (DataType& t : types)
    if (isFloatType(t)) t = DataType::kFLOAT;
  return true;
}

bool broadcastDims(const std::vector<Dims>& shapes, Dims& out, std::string* why) {
  out = Dims{};
  for (const Dims& d : shapes) out.nbDims = d.nbDims > out.nbDims ? d.nbDims : out.nbDims;
  for (int32_t i = 0; i < out.nbDims; ++i) {
    out.d[i] = 1;
    for (const Dims& d : shapes) {
      const int32_t j = i - (out.nbDims - d.nbDims);
      const int64_t v = j >= 0 ? d.d[j] : 1;
      if (v == 1) continue;
      if (out.d[i] != 1 && out.d[i] != v) {
        if (why)
          *why = "output dim " + std::to_string(i) + ": " + std::to_string(out.d[i]) + " vs " +
                 std::to_string(v);
        return false;
      }
      out.d[i] = v;
    }
  }
  return true;
}

}  // namespace kiln::shape
