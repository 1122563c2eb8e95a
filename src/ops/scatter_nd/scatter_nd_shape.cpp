// The shape and type rule of ScatterND (kiln/ops/scatter_nd.h): Data of any type and rank >= 1,
// int32/int64 Indices whose last dim k is in [1, rank(Data)], Updates of Data's type and of shape
// Indices.shape[:-1] + Data.shape[k:]; the output is Data's shape and type.
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {

const InputCount ScatterND::inputs = {3, 3, "data, indices, updates"};

Status ScatterND::shapeRule(const ScatterNDParams& p, const Shapes& in, Shapes& out) {
  constexpr const char* kLayer = "scatter_nd";
  KILN_RETURN_IF_ERROR(shape::checkEnum(kLayer, "unknown reduction", p.reduction));
  const Dims& data = in[0].dims;
  const Dims& idx = in[1].dims;
  const Dims& upd = in[2].dims;
  if (in[1].type != DataType::kINT32 && in[1].type != DataType::kINT64)
    return invalidArgument(std::string(kLayer) + ": indices must be int32 or int64, got " +
                           dataTypeName(in[1].type));
  if (in[2].type != in[0].type)
    return invalidArgument(std::string(kLayer) + ": updates are " + dataTypeName(in[2].type) +
                           " but data is " + dataTypeName(in[0].type));
  const bool arithmetic =
      isFloatType(in[0].type) || in[0].type == DataType::kINT32 || in[0].type == DataType::kINT64;
  if (p.reduction != ScatterReduction::kNONE && !arithmetic)
    return invalidArgument(std::string(kLayer) +
                           ": a reduction needs float, int32 or int64 data, got " +
                           dataTypeName(in[0].type));
  if (data.nbDims < 1) return invalidArgument(std::string(kLayer) + ": data must have rank >= 1");
  if (idx.nbDims < 1) return invalidArgument(std::string(kLayer) + ": indices must have rank >= 1");
  const int64_t k = idx.d[idx.nbDims - 1];
  if (k < 1 || k > data.nbDims)
    return invalidArgument(std::string(kLayer) + ": the last dim of indices " + dimsString(idx) +
                           " is " + shape::str(k) +
                           "; it must be in [1, rank(data) = " + shape::str(data.nbDims) + "]");
  Dims want;
  for (int32_t a = 0; a + 1 < idx.nbDims; ++a) want.d[want.nbDims++] = idx.d[a];
  for (int32_t a = static_cast<int32_t>(k); a < data.nbDims; ++a) {
    if (want.nbDims == Dims::kMaxDims)
      return invalidArgument(std::string(kLayer) + ": updates would need more than 8 dims");
    want.d[want.nbDims++] = data.d[a];
  }
  if (!(upd == want))
    return invalidArgument(std::string(kLayer) + ": updates are " + dimsString(upd) + "; indices " +
                           dimsString(idx) + " and data " + dimsString(data) + " need " +
                           dimsString(want));
  for (int32_t a = 0; a < k; ++a)
    if (data.d[a] == 0 && volume(idx) > 0)
      return invalidArgument(std::string(kLayer) + ": data " + dimsString(data) +
                             " is empty on axis " + std::to_string(a) +
                             ", so no index can be valid");
  return shape::setOutput(kLayer, data, in[0].type, out);
}

// Data and updates are moved or combined in fp32 (fp16/bf16 converted); indices stay as given.
bool ScatterND::computeTypes(const ScatterNDParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
