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

Status checkRowParam(const char* layer, const Dims& x, int32_t axis, const Dims& p,
                     const char* what) {
  const int32_t rowRank = x.nbDims - axis;
  Dims row;
  row.nbDims = rowRank;
  for (int32_t i = 0; i < rowRank; ++i) row.d[i] = x.d[axis + i];
  const std::string problem = std::string(layer) + ": " + what + " " + dimsString(p) +
                              " does not broadcast to the normalised dims X.shape[" +
                              std::to_string(axis) + ":] = " + dimsString(row) + " (X is " +
                              dimsString(x) + ")";
  for (int32_t i = 0; i < p.nbDims; ++i) {
    const int32_t r = i - (p.nbDims - rowRank);  // the aligned dim of the row, or < 0
    if (r < 0) {
      if (p.d[i] != 1)
        return invalidArgument(problem + ": its dim " + std::to_string(i) +
                               " lies before the axis and must be 1");
    } else if (p.d[i] != 1 && p.d[i] != row.d[r]) {
      return invalidArgument(problem + ": its dim " + std::to_string(i) + " is " +
                             std::to_string(p.d[i]) + ", expected 1 or " +
                             std::to_string(row.d[r]));
    }
  }
  return Status::ok();
}

Status dimsFromSource(const char* layer, const char* what, const int32_t* dimsOf,
                      const std::vector<TensorShape>& in, size_t source, Dims& dims) {
  const std::string name(layer);
  bool uses = false;
  for (int32_t i = 0; i < Dims::kMaxDims; ++i) {
    const int32_t of = dimsOf[i];
    if (of == 0) continue;
    uses = true;
    const std::string dim = std::string(what) + " " + std::to_string(i);
    if (i >= dims.nbDims)
      return invalidArgument(name + ": " + dim +
                             " is taken from the dims source, but there is no " + dim);
    if (in.size() <= source)
      return invalidArgument(name + ": " + dim + " is a dim of the dims source (input " +
                             std::to_string(source) + "), and there is none");
    const Dims& from = in[source].dims;
    if (of < 0 || of > from.nbDims)
      return invalidArgument(name + ": " + dim + " is dim " + std::to_string(of - 1) +
                             " of the dims source " + dimsString(from) + ", which has no such dim");
    dims.d[i] = from.d[of - 1];
  }
  if (in.size() > source && !uses)
    return invalidArgument(name + ": a dims source (input " + std::to_string(source) +
                           ") is given but no " + what + " is taken from it");
  return Status::ok();
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
