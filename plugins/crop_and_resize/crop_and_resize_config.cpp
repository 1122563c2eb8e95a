#include "crop_and_resize_config.h"

namespace kiln::plugins {
namespace {

bool reject(std::string* why, std::string message) {
  if (why) *why = std::move(message);
  return false;
}

#if defined(KILN_PLUGINS_CUDA) && KILN_PLUGINS_CUDA
constexpr bool kCudaBuilt = true;
#else
constexpr bool kCudaBuilt = false;
#endif

const char* tensorName(int32_t pos, int32_t nbInputs) {
  if (pos == nbInputs) return "output";
  if (pos == 0) return nbInputs == 2 ? "feature_maps" : "image";
  if (pos == 1) return nbInputs == 2 ? "rois" : "boxes";
  return "box_indices";
}

}  // namespace

bool cropAndResizeSupports(int32_t pos, const PluginTensorDesc* inOut, int32_t nbInputs,
                           int32_t nbOutputs, std::string* why) {
  if (nbInputs != 2 && nbInputs != 3)
    return reject(why, "takes 2 or 3 inputs, got " + std::to_string(nbInputs));
  if (nbOutputs != 1) return reject(why, "has 1 output, got " + std::to_string(nbOutputs));
  if (!inOut || pos < 0 || pos > nbInputs)
    return reject(why, "position " + std::to_string(pos) + " is out of range");
  const PluginTensorDesc& d = inOut[pos];
  const std::string name = tensorName(pos, nbInputs);
  const std::string got = std::string(dataTypeName(d.type)) + " " + formatName(d.format);
  if (d.device == DeviceKind::kCUDA && !kCudaBuilt)
    return reject(why, name +
                           ": this plugin library was built without CUDA; only the CPU is "
                           "supported");
  if (d.device != DeviceKind::kCPU && d.device != DeviceKind::kCUDA)
    return reject(why, name + ": unknown device");
  if (pos > 0 && d.device != inOut[0].device)
    return reject(why, name + " must be on the same device as " + tensorName(0, nbInputs));
  if (pos == 0) {
    if (!isFloatType(d.type)) return reject(why, name + " must be fp32, fp16 or bf16, got " + got);
    if (d.format == TensorFormat::kLINEAR) return true;
    if (d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims == 4) return true;
    return reject(why, name + " must be linear or rank-4 channels_last, got " + got);
  }
  const DataType featureType = inOut[0].type;
  if (pos == nbInputs) {
    if (d.type != featureType)
      return reject(why, name + " must have the feature map's type " +
                             std::string(dataTypeName(featureType)) + ", got " + got);
    if (d.format == TensorFormat::kLINEAR) return true;
    if (nbInputs == 3 && d.format == TensorFormat::kCHANNELS_LAST && d.dims.nbDims == 4)
      return true;
    return reject(why,
                  name + " must be linear (or rank-4 channels_last with 3 inputs), got " + got);
  }
  if (d.format != TensorFormat::kLINEAR) return reject(why, name + " must be linear, got " + got);
  if (pos == 1) {
    if (d.type == DataType::kFLOAT || (d.type == featureType && isFloatType(d.type))) return true;
    return reject(why, name + " must be fp32 or the feature map's type, got " + got);
  }
  if (d.type != DataType::kINT32) return reject(why, name + " must be int32, got " + got);
  return true;
}

std::string checkCropAndResizeConfig(const PluginTensorDesc* inOut, int32_t nbInputs,
                                     int32_t nbOutputs) {
  std::string why;
  if (!cropAndResizeSupports(0, inOut, nbInputs, nbOutputs, &why)) return why;
  for (int32_t pos = 1; pos <= nbInputs; ++pos)
    if (!cropAndResizeSupports(pos, inOut, nbInputs, nbOutputs, &why)) return why;
  return {};
}

void describeCropAndResizeConfig(const CropAndResizeConfig& config, PluginTensorDesc* inOut) {
  const int32_t n = config.nbInputs;
  for (int32_t i = 0; i <= n; ++i) inOut[i] = PluginTensorDesc();
  inOut[0].type = config.featureType;
  inOut[0].format = config.featureFormat;
  inOut[0].dims.nbDims = 4;
  inOut[1].type = config.boxesType;
  if (n == 3) inOut[2].type = DataType::kINT32;
  inOut[n].type = config.featureType;
  inOut[n].format = config.outputFormat;
  inOut[n].dims.nbDims = n == 2 ? 5 : 4;
  for (int32_t i = 0; i <= n; ++i) inOut[i].device = config.device;
}

ShapeView shapeOf(const Dims& dims) {
  ShapeView s;
  s.nbDims = dims.nbDims;
  const int32_t n = dims.nbDims < 0 || dims.nbDims > Dims::kMaxDims ? 0 : dims.nbDims;
  for (int32_t i = 0; i < n; ++i)
    if (dims.d[i] >= 0) s.d[i] = dims.d[i];  // a negative dim is an unknown one
  return s;
}

std::string shapeString(const ShapeView& shape) {
  if (shape.nbDims < 0 || shape.nbDims > Dims::kMaxDims)
    return "<rank " + std::to_string(shape.nbDims) + ">";
  std::string s = "[";
  for (int32_t i = 0; i < shape.nbDims; ++i) {
    if (i) s += ",";
    s += shape.d[i] ? std::to_string(*shape.d[i]) : "?";
  }
  return s + "]";
}

namespace {

// False only when both are known and differ.
bool mayEqual(const std::optional<int64_t>& a, int64_t b) { return !a || *a == b; }
bool mayEqual(const std::optional<int64_t>& a, const std::optional<int64_t>& b) {
  return !a || !b || *a == *b;
}

std::string checkImage(const ShapeView& s, const char* name) {
  if (s.nbDims != 4) return std::string(name) + " must be [N,C,H,W], got " + shapeString(s);
  if ((s.d[2] && *s.d[2] == 0) || (s.d[3] && *s.d[3] == 0))
    return std::string(name) + " must have height and width of at least 1, got " + shapeString(s);
  return {};
}

}  // namespace

std::string checkCropAndResizeShapes(const ShapeView* in, int32_t nbInputs) {
  if (nbInputs != 2 && nbInputs != 3)
    return "takes 2 inputs (feature_maps, rois) or 3 (image, boxes, box_indices), got " +
           std::to_string(nbInputs);
  if (!in) return "no input shapes";
  if (nbInputs == 2) {
    std::string e = checkImage(in[0], "feature_maps");
    if (!e.empty()) return e;
    const ShapeView& r = in[1];
    const bool rank3 = r.nbDims == 3 && mayEqual(r.d[2], 4);
    const bool rank4 = r.nbDims == 4 && mayEqual(r.d[2], 4) && mayEqual(r.d[3], 1);
    if (!rank3 && !rank4) return "rois must be [N,B,4] or [N,B,4,1], got " + shapeString(r);
    if (!mayEqual(r.d[0], in[0].d[0]))
      return "rois " + shapeString(r) + " and feature_maps " + shapeString(in[0]) +
             " disagree on N";
    return {};
  }
  std::string e = checkImage(in[0], "image");
  if (!e.empty()) return e;
  const ShapeView& b = in[1];
  if (b.nbDims != 2 || !mayEqual(b.d[1], 4)) return "boxes must be [K,4], got " + shapeString(b);
  const ShapeView& idx = in[2];
  if (idx.nbDims != 1) return "box_indices must be [K], got " + shapeString(idx);
  if (!mayEqual(idx.d[0], b.d[0]))
    return "box_indices " + shapeString(idx) + " and boxes " + shapeString(b) + " disagree on K";
  return {};
}

Dims cropAndResizeOutputDims(const Dims* in, int32_t nbInputs, int32_t cropHeight,
                             int32_t cropWidth) {
  if (nbInputs == 2) return makeDims({in[0].d[0], in[1].d[1], in[0].d[1], cropHeight, cropWidth});
  return makeDims({in[1].d[0], in[0].d[1], cropHeight, cropWidth});
}

}  // namespace kiln::plugins
