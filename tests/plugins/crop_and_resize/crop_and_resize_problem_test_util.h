// One CropAndResize problem as the CPU and CUDA kernel tests draw it: values in float, tensors
// encoded in the plugin's types and formats, and the §5 box cases drawn at random.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "crop_and_resize_test_util.h"

namespace kiln::testing {

inline size_t sizeOf(DataType t) { return t == DataType::kFLOAT ? 4 : 2; }

inline float roundTo(DataType type, float v) {
  if (type == DataType::kHALF) return halfToFloat(floatToHalf(v));
  if (type == DataType::kBF16) return bf16ToFloat(floatToBf16(v));
  return v;
}

inline std::vector<uint8_t> encode(const std::vector<float>& values, DataType type) {
  std::vector<uint8_t> bytes(values.size() * sizeOf(type));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::kFLOAT) {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    } else {
      const uint16_t h = type == DataType::kHALF ? floatToHalf(values[i]) : floatToBf16(values[i]);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
  }
  return bytes;
}

inline float decodeAt(const std::vector<uint8_t>& bytes, DataType type, size_t i) {
  if (type == DataType::kFLOAT) {
    float f;
    std::memcpy(&f, &bytes[4 * i], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[2 * i], 2);
  return type == DataType::kHALF ? halfToFloat(h) : bf16ToFloat(h);
}

inline std::vector<float> decode(const std::vector<uint8_t>& bytes, DataType type) {
  std::vector<float> values(bytes.size() / sizeOf(type));
  for (size_t i = 0; i < values.size(); ++i) values[i] = decodeAt(bytes, type, i);
  return values;
}

// [A,C,H,W] logical <-> [A,H,W,C] in memory.
inline std::vector<float> toChannelsLast(const std::vector<float>& v, int64_t A, int64_t C,
                                         int64_t H, int64_t W) {
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          out[((a * H + h) * W + w) * C + c] = v[((a * C + c) * H + h) * W + w];
  return out;
}
inline std::vector<float> fromChannelsLast(const std::vector<float>& v, int64_t A, int64_t C,
                                           int64_t H, int64_t W) {
  std::vector<float> out(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          out[((a * C + c) * H + h) * W + w] = v[((a * H + h) * W + w) * C + c];
  return out;
}

struct Problem {
  int nbInputs = 3;
  int64_t N = 1, C = 1, H = 1, W = 1, B = 0, K = 0;  // B: boxes per image (2 inputs)
  bool rois4d = false;
  int ch = 1, cw = 1;
  bool nearest = false;
  float extrapolation = 0.0f;
  DataType type = DataType::kFLOAT, boxesType = DataType::kFLOAT;
  TensorFormat featureFormat = TensorFormat::kLINEAR, outputFormat = TensorFormat::kLINEAR;
  std::vector<float> image;      // logical NCHW, already rounded to `type`
  std::vector<float> boxes;      // 4 per box, already rounded to `boxesType`
  std::vector<int32_t> indices;  // three-input form
  std::vector<int64_t> imageOf;  // the image of every box, as a reference sees it
  int badBoxes = 0;
};

inline std::string describe(const Problem& p) {
  return std::to_string(p.nbInputs) + " inputs, N=" + std::to_string(p.N) +
         " C=" + std::to_string(p.C) + " H=" + std::to_string(p.H) + " W=" + std::to_string(p.W) +
         " K=" + std::to_string(p.K) + " crop " + std::to_string(p.ch) + "x" +
         std::to_string(p.cw) + (p.nearest ? " nearest" : " bilinear") + ", " +
         dataTypeName(p.type) + " boxes " + dataTypeName(p.boxesType) + ", " +
         formatName(p.featureFormat) + " -> " + formatName(p.outputFormat) + ", extrapolation " +
         std::to_string(p.extrapolation);
}

// A box (normalised y1, x1, y2, x2) of one of the cases §5 singles out; `smallBoxes` adds boxes
// so small that many samples share corners (what the CUDA kernels' corner reuse must survive).
inline void randomBox(std::mt19937& rng, float* b, bool smallBoxes = false) {
  auto u = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  for (int i = 0; i < 4; ++i) b[i] = u(0.0f, 1.0f);  // inside, either order (flipped or not)
  switch (std::uniform_int_distribution<int>(0, smallBoxes ? 11 : 9)(rng)) {
    case 0:
    case 1: {  // the whole image, maybe flipped: samples exactly on the borders
      const bool fy = rng() & 1, fx = rng() & 1;
      b[0] = fy ? 1.0f : 0.0f;
      b[2] = fy ? 0.0f : 1.0f;
      b[1] = fx ? 1.0f : 0.0f;
      b[3] = fx ? 0.0f : 1.0f;
      break;
    }
    case 2:
    case 3:  // partly outside
      for (int i = 0; i < 4; ++i) b[i] = u(-0.7f, 1.7f);
      break;
    case 4: {  // wholly outside along one axis
      const int axis = rng() & 1;
      const float base = (rng() & 1) ? 1.05f : -1.5f;
      b[axis] = base + u(0.0f, 0.4f);
      b[axis + 2] = base + u(0.0f, 0.4f);
      break;
    }
    case 5:  // NaN or infinity in one coordinate
      b[rng() % 4] = (rng() & 1)
                         ? std::numeric_limits<float>::quiet_NaN()
                         : ((rng() & 1) ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
      break;
    case 6: {  // zero extent along an axis
      const int axis = rng() & 1;
      b[axis + 2] = b[axis];
      break;
    }
    case 7:  // a small box: many samples share corners
      if (smallBoxes) {
        b[2] = b[0] + u(-0.1f, 0.1f);
        b[3] = b[1] + u(-0.1f, 0.1f);
      }
      break;
    default:  // plain random box, flipped half the time by the uniform draw
      break;
  }
}

// The tensors of a problem as the plugin sees them, on `device`.
struct Tensors {
  std::vector<PluginTensorDesc> inDescs;
  PluginTensorDesc outDesc;
  std::vector<std::vector<uint8_t>> inBytes;
  size_t outElements = 0;
  size_t outBytes = 0;
};

inline Tensors tensorsOf(const Problem& p, DeviceKind device = DeviceKind::kCPU) {
  Tensors t;
  t.inDescs.push_back(desc(makeDims({p.N, p.C, p.H, p.W}), p.type, p.featureFormat));
  t.inBytes.push_back(encode(p.featureFormat == TensorFormat::kLINEAR
                                 ? p.image
                                 : toChannelsLast(p.image, p.N, p.C, p.H, p.W),
                             p.type));
  Dims outDims;
  if (p.nbInputs == 2) {
    t.inDescs.push_back(
        desc(p.rois4d ? makeDims({p.N, p.B, 4, 1}) : makeDims({p.N, p.B, 4}), p.boxesType));
    outDims = makeDims({p.N, p.B, p.C, p.ch, p.cw});
  } else {
    t.inDescs.push_back(desc(makeDims({p.K, 4}), p.boxesType));
    t.inDescs.push_back(desc(makeDims({p.K}), DataType::kINT32));
    outDims = makeDims({p.K, p.C, p.ch, p.cw});
  }
  t.inBytes.push_back(encode(p.boxes, p.boxesType));
  if (p.nbInputs == 3) {
    std::vector<uint8_t> idx(p.indices.size() * 4);
    if (!idx.empty()) std::memcpy(idx.data(), p.indices.data(), idx.size());
    t.inBytes.push_back(idx);
  }
  t.outDesc = desc(outDims, p.type, p.outputFormat);
  t.outElements = static_cast<size_t>(p.K * p.C * p.ch * p.cw);
  t.outBytes = t.outElements * sizeOf(p.type);
  for (auto& d : t.inDescs) d.device = device;
  t.outDesc.device = device;
  return t;
}

}  // namespace kiln::testing
