// Shape and type inference for select (ONNX Where): condition ? x : y with numpy broadcasting
// of all three inputs.
#include <string>

#include "core/light_infer_util.h"
#include "core/shape_inference.h"

namespace kiln {

Status inferSelect(const SelectParams&, const std::vector<TensorShape>& in,
                   std::vector<TensorShape>& out) {
  const char* layer = "select";
  KILN_RETURN_IF_ERROR(light::checkInputCount(layer, in, 3));
  KILN_RETURN_IF_ERROR(light::checkAllShapes(layer, in));
  if (in[0].type != DataType::kBOOL)
    return invalidArgument(std::string("select: condition (input 0) must be bool, got ") +
                           dataTypeName(in[0].type));
  if (in[1].type != in[2].type)
    return invalidArgument(std::string("select: x and y have different types (") +
                           dataTypeName(in[1].type) + " and " + dataTypeName(in[2].type) +
                           "); insert a cast");
  // numpy rules over three shapes: align trailing dims; a dim of 1 stretches (0 included).
  Dims o;
  for (const TensorShape& s : in) o.nbDims = s.dims.nbDims > o.nbDims ? s.dims.nbDims : o.nbDims;
  for (int32_t i = 0; i < o.nbDims; ++i) {
    o.d[i] = 1;
    for (size_t k = 0; k < in.size(); ++k) {
      const Dims& d = in[k].dims;
      const int32_t j = i - (o.nbDims - d.nbDims);
      const int64_t v = j >= 0 ? d.d[j] : 1;
      if (v == 1) continue;
      if (o.d[i] != 1 && o.d[i] != v)
        return invalidArgument("select: input dims " + light::dimsString(in[0].dims) + ", " +
                               light::dimsString(in[1].dims) + " and " +
                               light::dimsString(in[2].dims) + " do not broadcast (output dim " +
                               std::to_string(i) + ": " + std::to_string(o.d[i]) + " vs " +
                               std::to_string(v) + ")");
      o.d[i] = v;
    }
  }
  KILN_RETURN_IF_ERROR(light::checkOutputDims(layer, o));
  out.assign(1, TensorShape{o, in[1].type});
  return Status::ok();
}

}  // namespace kiln
