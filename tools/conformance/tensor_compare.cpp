#include "conformance/tensor_compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "kiln/float16.h"

namespace kiln::conformance {
namespace {

bool isIntegral(DataType t) {
  return t == DataType::kINT8 || t == DataType::kINT32 || t == DataType::kINT64 ||
         t == DataType::kBOOL;
}

template <typename T>
T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, int64_t i, T v) {
  std::memcpy(p + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// int64 is read without a detour through double so large indices stay exact.
int64_t loadInt(DataType t, const uint8_t* p, int64_t i) {
  switch (t) {
    case DataType::kINT8:
      return load<int8_t>(p, i);
    case DataType::kINT32:
      return load<int32_t>(p, i);
    case DataType::kINT64:
      return load<int64_t>(p, i);
    case DataType::kBOOL:
      return load<uint8_t>(p, i) != 0;
    default:
      return 0;
  }
}

double loadDouble(DataType t, const uint8_t* p, int64_t i) {
  // Integers exactly (int64 past 2^53 included), floats through kiln's one element reader.
  return isFloatType(t) ? readElement(p, t, i) : static_cast<double>(loadInt(t, p, i));
}

void storeValue(DataType t, uint8_t* p, int64_t i, double v, int64_t iv, bool fromInt) {
  switch (t) {
    case DataType::kFLOAT:
      store<float>(p, i, static_cast<float>(v));
      break;
    case DataType::kHALF:
      store<uint16_t>(p, i, floatToHalf(static_cast<float>(v)));
      break;
    case DataType::kBF16:
      store<uint16_t>(p, i, floatToBf16(static_cast<float>(v)));
      break;
    case DataType::kINT8:
      store<int8_t>(p, i, static_cast<int8_t>(fromInt ? iv : int64_t(v)));
      break;
    case DataType::kINT32:
      store<int32_t>(p, i, static_cast<int32_t>(fromInt ? iv : int64_t(v)));
      break;
    case DataType::kINT64:
      store<int64_t>(p, i, fromInt ? iv : static_cast<int64_t>(v));
      break;
    case DataType::kBOOL:
      store<uint8_t>(p, i, (fromInt ? iv != 0 : v != 0) ? 1 : 0);
      break;
  }
}

// Index into a channels-last buffer of the element at linear (NCHW) index `i`.
int64_t channelsLastIndex(const Dims& d, int64_t i) {
  const int64_t w = i % d.d[3], h = (i / d.d[3]) % d.d[2], c = (i / (d.d[3] * d.d[2])) % d.d[1],
                n = i / (d.d[3] * d.d[2] * d.d[1]);
  return ((n * d.d[2] + h) * d.d[3] + w) * d.d[1] + c;
}

bool isChannelsLast(const PluginTensorDesc& desc) {
  return desc.format == TensorFormat::kCHANNELS_LAST && desc.dims.nbDims == 4;
}

}  // namespace

std::string dimsText(const Dims& dims) {
  std::string s = "[";
  for (int32_t i = 0; i < dims.nbDims; ++i) s += (i ? "," : "") + std::to_string(dims.d[i]);
  return s + "]";
}

Status toEngineBuffer(const OnnxTensor& src, const PluginTensorDesc& want, EngineBuffer& out) {
  if (src.dims != want.dims) {
    return invalidArgument("test data '" + src.name + "' has shape " + dimsText(src.dims) +
                           " but the engine input is " + dimsText(want.dims));
  }
  const int64_t n = volume(want.dims);
  if (n < 0 || src.data.size() != static_cast<size_t>(n) * dataTypeSize(src.type)) {
    return invalidArgument("test data '" + src.name + "' holds " + std::to_string(src.data.size()) +
                           " bytes, not " + std::to_string(n) + " " + dataTypeName(src.type) +
                           " values");
  }
  out.desc = want;
  out.data.assign(static_cast<size_t>(n) * dataTypeSize(want.type), 0);
  const bool fromInt = isIntegral(src.type);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = isChannelsLast(want) ? channelsLastIndex(want.dims, i) : i;
    storeValue(want.type, out.data.data(), j,
               fromInt ? 0.0 : loadDouble(src.type, src.data.data(), i),
               fromInt ? loadInt(src.type, src.data.data(), i) : 0, fromInt);
  }
  return Status::ok();
}

bool compareOutput(const EngineBuffer& got, const OnnxTensor& want, const Tolerance& tol,
                   std::string& detail) {
  std::ostringstream why;
  if (got.desc.dims != want.dims) {
    why << "shape " << dimsText(got.desc.dims) << ", expected " << dimsText(want.dims);
    detail = why.str();
    return false;
  }
  const int64_t n = volume(want.dims);
  if (n < 0 || want.data.size() != static_cast<size_t>(n) * dataTypeSize(want.type) ||
      got.data.size() != static_cast<size_t>(n) * dataTypeSize(got.desc.type)) {
    detail = "buffer sizes do not match the shape " + dimsText(want.dims);
    return false;
  }
  const bool exact = isIntegral(want.type);
  double worstAbs = 0, worstRel = 0;
  int64_t bad = 0, firstBad = -1;
  double firstGot = 0, firstWant = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = isChannelsLast(got.desc) ? channelsLastIndex(got.desc.dims, i) : i;
    bool ok;
    double g, w;
    if (exact && isIntegral(got.desc.type)) {
      const int64_t gi = loadInt(got.desc.type, got.data.data(), j);
      const int64_t wi = loadInt(want.type, want.data.data(), i);
      ok = gi == wi;
      g = static_cast<double>(gi);
      w = static_cast<double>(wi);
    } else {
      g = loadDouble(got.desc.type, got.data.data(), j);
      w = loadDouble(want.type, want.data.data(), i);
      if (exact) {
        ok = g == w;
      } else if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else if (std::isinf(w) || std::isinf(g)) {
        ok = g == w;
      } else {
        const double err = std::fabs(g - w);
        ok = err <= tol.atol + tol.rtol * std::fabs(w);
        worstAbs = std::max(worstAbs, err);
        if (w != 0) worstRel = std::max(worstRel, err / std::fabs(w));
      }
    }
    if (!ok) {
      if (firstBad < 0) {
        firstBad = i;
        firstGot = g;
        firstWant = w;
      }
      ++bad;
    }
  }
  why.precision(9);
  if (bad) {
    why << bad << "/" << n << " values differ; first at " << firstBad << ": got " << firstGot
        << ", want " << firstWant << " (worst abs " << worstAbs << ")";
  } else {
    why << "max abs err " << worstAbs << ", max rel err " << worstRel;
  }
  detail = why.str();
  return bad == 0;
}

}  // namespace kiln::conformance
