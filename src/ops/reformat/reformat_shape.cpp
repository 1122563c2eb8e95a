// The shape and type rule of Reformat (see ops/op.h).
#include <string>
#include <vector>

#include "ops/op.h"
#include "ops/shape_checks.h"

namespace kiln::ops {
namespace {

// Which type conversions a reformat does. Plain value casts only: int8 <-> float would be a
// quantization (it needs a scale that reformat does not carry), and the 16-bit floats go to and
// from integers through fp32, so those pairs are refused rather than given a surprising meaning.
bool reformatConversionAllowed(DataType from, DataType to) {
  if (from == to) return true;
  auto isInt = [](DataType t) {
    return t == DataType::kINT8 || t == DataType::kINT32 || t == DataType::kINT64 ||
           t == DataType::kBOOL;
  };
  if (isFloatType(from) && isFloatType(to)) return true;
  if (isInt(from) && isInt(to)) return true;
  // fp32 <-> int32/int64/bool; not int8 (quantized) and not fp16/bf16.
  auto castsWithFp32 = [](DataType t) {
    return t == DataType::kINT32 || t == DataType::kINT64 || t == DataType::kBOOL;
  };
  if (from == DataType::kFLOAT && castsWithFp32(to)) return true;
  if (to == DataType::kFLOAT && castsWithFp32(from)) return true;
  return false;
}

}  // namespace

const InputCount Reformat::inputs = {1, 1, "x"};

Status Reformat::shapeRule(const ReformatParams& p, const Shapes& in, Shapes& out) {
  KILN_RETURN_IF_ERROR(shape::checkEnum("reformat", "invalid output type", p.outputType));
  KILN_RETURN_IF_ERROR(shape::checkEnum("reformat", "invalid output format", p.outputFormat));
  if (p.outputFormat == TensorFormat::kCHANNELS_LAST && in[0].dims.nbDims != 4)
    return invalidArgument("reformat: channels_last needs a rank-4 tensor, got dims " +
                           dimsString(in[0].dims));
  if (!reformatConversionAllowed(in[0].type, p.outputType)) {
    std::string why = std::string("reformat: no conversion from ") + dataTypeName(in[0].type) +
                      " to " + dataTypeName(p.outputType);
    if (in[0].type == DataType::kINT8 || p.outputType == DataType::kINT8)
      why += " (int8 <-> float is a quantization and needs a scale)";
    else
      why += " (16-bit floats convert to and from integers through fp32)";
    return unsupported(why);
  }
  out.assign(1, TensorShape{in[0].dims, p.outputType});
  return Status::ok();
}

// A cast in the network converts from where the value lives: any type, floats from fp32.
bool Reformat::computeTypes(const ReformatParams&, std::vector<DataType>& types, std::string&) {
  return shape::movedFloatsInFp32(types);
}

}  // namespace kiln::ops
