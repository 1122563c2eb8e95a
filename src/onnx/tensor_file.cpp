// readOnnxTensorFile: a serialized TensorProto (.pb), as the ONNX test data stores tensors.
#include <cstring>
#include <fstream>

#include "kiln/float16.h"
#include "kiln/onnx_parser.h"
#include "onnx/import_context.h"

namespace kiln {

Status readOnnxTensorFile(const std::string& path, OnnxTensor& tensor) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return ioError("cannot open tensor file '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return corruptData("'" + path + "' is not a valid ONNX TensorProto");
  onnx_import::ConstTensor c;
  Status s = onnx_import::constantFromProto(proto, c);
  if (!s) return s.withContext("tensor file '" + path + "'");
  DataType type;
  if (!onnx_import::dataTypeFromOnnx(proto.data_type(), type) &&
      proto.data_type() != onnx::TensorProto::DOUBLE)
    return unsupported("tensor file '" + path + "' has an element type kiln does not support");
  if (proto.data_type() == onnx::TensorProto::DOUBLE) type = DataType::kFLOAT;
  tensor.name = proto.name();
  tensor.type = type;
  tensor.dims = c.dims;
  const size_t n = size_t(c.count());
  tensor.data.assign(n * dataTypeSize(type), 0);
  uint8_t* out = tensor.data.data();
  for (size_t k = 0; k < n; ++k) {
    switch (type) {
      case DataType::kFLOAT:
        std::memcpy(out + 4 * k, &c.f[k], 4);
        break;
      case DataType::kHALF: {
        const uint16_t h = floatToHalf(c.f[k]);
        std::memcpy(out + 2 * k, &h, 2);
        break;
      }
      case DataType::kBF16: {
        const uint16_t h = floatToBf16(c.f[k]);
        std::memcpy(out + 2 * k, &h, 2);
        break;
      }
      case DataType::kINT8:
        out[k] = uint8_t(int8_t(c.i[k]));
        break;
      case DataType::kBOOL:
        out[k] = c.i[k] != 0;
        break;
      case DataType::kINT32: {
        const int32_t v = int32_t(c.i[k]);
        std::memcpy(out + 4 * k, &v, 4);
        break;
      }
      case DataType::kINT64:
        std::memcpy(out + 8 * k, &c.i[k], 8);
        break;
    }
  }
  return Status::ok();
}

}  // namespace kiln
