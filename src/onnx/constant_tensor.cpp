// ONNX TensorProto -> parse-time constant, and constants -> network constant layers.
#include <cstring>
#include <limits>

#include "kiln/float16.h"
#include "onnx/import_context.h"
#include "onnx/shape_corners.h"

namespace kiln::onnx_import {
namespace {

template <typename T>
T readLE(const std::string& raw, size_t k) {
  T v;
  std::memcpy(&v, raw.data() + k * sizeof(T), sizeof(T));  // x86/ARM hosts are little-endian
  return v;
}

size_t onnxElementSize(int32_t t) {
  using TP = onnx::TensorProto;
  switch (t) {
    case TP::FLOAT:
    case TP::INT32:
    case TP::UINT32:
      return 4;
    case TP::UINT8:
    case TP::INT8:
    case TP::BOOL:
      return 1;
    case TP::UINT16:
    case TP::INT16:
    case TP::FLOAT16:
    case TP::BFLOAT16:
      return 2;
    case TP::INT64:
    case TP::DOUBLE:
    case TP::UINT64:
      return 8;
    default:
      return 0;
  }
}

}  // namespace

bool dataTypeFromOnnx(int32_t t, DataType& out) {
  using TP = onnx::TensorProto;
  switch (t) {
    case TP::FLOAT:
      out = DataType::kFLOAT;
      return true;
    case TP::FLOAT16:
      out = DataType::kHALF;
      return true;
    case TP::BFLOAT16:
      out = DataType::kBF16;
      return true;
    case TP::INT8:
      out = DataType::kINT8;
      return true;
    case TP::INT32:
      out = DataType::kINT32;
      return true;
    case TP::INT64:
      out = DataType::kINT64;
      return true;
    case TP::BOOL:
      out = DataType::kBOOL;
      return true;
    default:
      return false;
  }
}

Status constantFromProto(const onnx::TensorProto& p, ConstTensor& out) {
  using TP = onnx::TensorProto;
  const std::string what = "tensor '" + p.name() + "'";
  if (p.data_location() == TP::EXTERNAL || p.external_data_size() > 0)
    return unsupported(what + " uses external data, which kiln does not read");
  if (p.has_segment()) return unsupported(what + " is segmented");
  if (p.dims_size() > Dims::kMaxDims) return unsupported(what + " has more than 8 dims");
  Dims dims;
  for (int64_t d : p.dims()) {
    if (d < 0) return invalidArgument(what + " has a negative dim");
    dims.d[dims.nbDims++] = d;
  }
  const int64_t n = volume(dims);
  if (n < 0 || n > (int64_t(1) << 31)) return invalidArgument(what + " is too large");
  const int32_t t = p.data_type();
  const size_t esize = onnxElementSize(t);
  if (esize == 0)
    return unsupported(what + " has element type " + TP::DataType_Name(TP::DataType(t)) +
                       ", which kiln does not support");
  const bool isFloat = t == TP::FLOAT || t == TP::FLOAT16 || t == TP::BFLOAT16 || t == TP::DOUBLE;
  DataType type = DataType::kFLOAT;
  if (!isFloat) {
    if (!dataTypeFromOnnx(t, type))
      type = (t == TP::UINT32 || t == TP::UINT64) ? DataType::kINT64 : DataType::kINT32;
  }
  const size_t count = size_t(n);
  // The data must be there before anything is allocated for it.
  const size_t have = p.has_raw_data()                       ? p.raw_data().size() / esize
                      : t == TP::FLOAT                       ? size_t(p.float_data_size())
                      : t == TP::DOUBLE                      ? size_t(p.double_data_size())
                      : t == TP::INT64                       ? size_t(p.int64_data_size())
                      : (t == TP::UINT32 || t == TP::UINT64) ? size_t(p.uint64_data_size())
                                                             : size_t(p.int32_data_size());
  if (have < count)
    return invalidArgument(what + " has " + std::to_string(have) + " values for " +
                           std::to_string(count) + " elements");
  out = ConstTensor::make(type, dims);
  auto put = [&](size_t k, double v) { out.set(int64_t(k), v); };

  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != count * esize)
      return invalidArgument(what + " has " + std::to_string(raw.size()) +
                             " bytes of raw data, expected " + std::to_string(count * esize));
    for (size_t k = 0; k < count; ++k) {
      switch (t) {
        case TP::FLOAT:
          out.f[k] = readLE<float>(raw, k);
          break;
        case TP::DOUBLE:
          out.f[k] = float(readLE<double>(raw, k));
          break;
        case TP::FLOAT16:
          out.f[k] = halfToFloat(readLE<uint16_t>(raw, k));
          break;
        case TP::BFLOAT16:
          out.f[k] = bf16ToFloat(readLE<uint16_t>(raw, k));
          break;
        case TP::INT8:
          out.i[k] = readLE<int8_t>(raw, k);
          break;
        case TP::UINT8:
          out.i[k] = readLE<uint8_t>(raw, k);
          break;
        case TP::BOOL:
          out.i[k] = readLE<uint8_t>(raw, k) != 0;
          break;
        case TP::INT16:
          out.i[k] = readLE<int16_t>(raw, k);
          break;
        case TP::UINT16:
          out.i[k] = readLE<uint16_t>(raw, k);
          break;
        case TP::INT32:
          out.i[k] = readLE<int32_t>(raw, k);
          break;
        case TP::UINT32:
          out.i[k] = readLE<uint32_t>(raw, k);
          break;
        case TP::INT64:
          out.i[k] = readLE<int64_t>(raw, k);
          break;
        case TP::UINT64:
          out.i[k] = int64_t(readLE<uint64_t>(raw, k));
          break;
        default:
          break;
      }
    }
    return Status::ok();
  }
  auto check = [&](int64_t have) -> Status {
    if (size_t(have) != count)
      return invalidArgument(what + " has " + std::to_string(have) + " values, expected " +
                             std::to_string(count));
    return Status::ok();
  };
  switch (t) {
    case TP::FLOAT:
      KILN_RETURN_IF_ERROR(check(p.float_data_size()));
      for (size_t k = 0; k < count; ++k) out.f[k] = p.float_data(int(k));
      break;
    case TP::DOUBLE:
      KILN_RETURN_IF_ERROR(check(p.double_data_size()));
      for (size_t k = 0; k < count; ++k) out.f[k] = float(p.double_data(int(k)));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16:
      KILN_RETURN_IF_ERROR(check(p.int32_data_size()));
      for (size_t k = 0; k < count; ++k) {
        const uint16_t bits = uint16_t(p.int32_data(int(k)));
        out.f[k] = t == TP::FLOAT16 ? halfToFloat(bits) : bf16ToFloat(bits);
      }
      break;
    case TP::INT64:
      KILN_RETURN_IF_ERROR(check(p.int64_data_size()));
      for (size_t k = 0; k < count; ++k) out.i[k] = p.int64_data(int(k));
      break;
    case TP::UINT32:
    case TP::UINT64:
      KILN_RETURN_IF_ERROR(check(p.uint64_data_size()));
      for (size_t k = 0; k < count; ++k) out.i[k] = int64_t(p.uint64_data(int(k)));
      break;
    default:  // the small integer types and bool live in int32_data
      KILN_RETURN_IF_ERROR(check(p.int32_data_size()));
      for (size_t k = 0; k < count; ++k) put(k, p.int32_data(int(k)));
      break;
  }
  return Status::ok();
}

Status constantTensor(ImportContext& ctx, Value& value, const std::string& name, ITensor*& out) {
  bool asOnes = false;
  if (ctx.corners)
    KILN_RETURN_IF_ERROR(ctx.corners->materialize(ctx, name, *value.constant, asOnes));
  // With profiles, a one-valued constant whose dims follow the input shapes, read by a node that
  // broadcasts, is that value at dims of 1 (shape_corners.h); only that node gets it.
  ConstTensor ones;
  if (asOnes) {
    Dims d = value.constant->dims;
    for (int32_t k = 0; k < d.nbDims; ++k) d.d[k] = 1;
    ones = ConstTensor::make(value.constant->type, d);
    if (ones.isFloat())
      ones.f[0] = value.constant->f[0];
    else
      ones.i[0] = value.constant->i[0];
  }
  const ConstTensor& c = asOnes ? ones : *value.constant;
  Weights w;
  w.count = c.count();
  std::vector<int32_t> i32;
  std::vector<uint8_t> u8;
  switch (c.type) {
    case DataType::kFLOAT:
      w.type = DataType::kFLOAT;
      w.values = c.f.data();
      break;
    case DataType::kINT64:
      w.type = DataType::kINT64;
      w.values = c.i.data();
      break;
    case DataType::kBOOL:
      u8.assign(c.i.begin(), c.i.end());
      w.type = DataType::kBOOL;
      w.values = u8.data();
      break;
    default:  // int8/int32 and the widened small types: int32 is what the kernels index with
      for (int64_t v : c.i) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
          return invalidArgument("constant '" + name + "' does not fit int32");
        i32.push_back(int32_t(v));
      }
      w.type = DataType::kINT32;
      w.values = i32.data();
      break;
  }
  ILayer* layer = ctx.net.addConstant(c.dims, w);
  if (!layer) return ctx.net.getLastError().withContext("constant '" + name + "'");
  ITensor* t = layer->getOutput(0);
  t->setName(name.c_str());  // best effort: a clash keeps the generated name
  if (!asOnes)
    value.tensor = t;
  else
    ctx.corners->madeAsOnes(ctx.net.getNbLayers() - 1);
  out = t;
  return Status::ok();
}

}  // namespace kiln::onnx_import
