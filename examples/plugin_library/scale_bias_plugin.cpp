#include "scale_bias_plugin.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

#include "kiln/float16.h"
#include "kiln/plugin_utils.h"
#if KILN_EXAMPLE_CUDA
#include "scale_bias_cuda.h"
#endif

namespace kiln_example {
namespace {

using kiln::DataType;
using kiln::PluginTensorDesc;
using kiln::TensorFormat;

// Serialized form, little-endian: magic, layout version, scale, bias, configured type. The magic
// and version let deserialize() refuse bytes that were never a ScaleBias or come from a newer
// layout, instead of misreading them.
constexpr uint32_t kMagic = 0x31425353;  // "SSB1"
constexpr uint32_t kLayoutVersion = 1;
constexpr size_t kSerializedSize = 4 + 4 + 4 + 4 + 4;

bool supportedDevice(kiln::DeviceKind device) {
#if KILN_EXAMPLE_CUDA
  if (device == kiln::DeviceKind::kCUDA) return true;
#endif
  return device == kiln::DeviceKind::kCPU;
}

bool supportedType(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF; }
bool supportedType(int32_t t) {
  return t == static_cast<int32_t>(DataType::kFLOAT) || t == static_cast<int32_t>(DataType::kHALF);
}

// Number of elements, or -1 for negative dims, an invalid rank or overflow.
int64_t elementCount(const kiln::Dims& dims) {
  if (dims.nbDims < 0 || dims.nbDims > kiln::Dims::kMaxDims) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0) return -1;
    if (dims.d[i] != 0 && n > std::numeric_limits<int64_t>::max() / dims.d[i]) return -1;
    n *= dims.d[i];
  }
  return n;
}

template <typename Load, typename Store>
void scaleBias(int64_t n, float scale, float bias, Load load, Store store) {
  for (int64_t i = 0; i < n; ++i) store(i, load(i) * scale + bias);
}

}  // namespace

int32_t ScaleBiasPlugin::fail(int32_t code, const std::string& message) const noexcept {
  try {
    lastError_ = std::string(kScaleBiasName) + ": " + message;
  } catch (...) {
    // Out of memory while describing an error: the code alone still says it failed.
  }
  return code;
}

void ScaleBiasPlugin::setPluginNamespace(const char* pluginNamespace) noexcept {
  try {
    namespace_ = pluginNamespace ? pluginNamespace : "";
  } catch (...) {
    namespace_.clear();
  }
}

int32_t ScaleBiasPlugin::getOutputDataType(int32_t outputIndex, const DataType* inputTypes,
                                           int32_t nbInputs, DataType* outputType) const noexcept {
  if (outputIndex != 0 || nbInputs != 1 || !inputTypes || !outputType)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT,
                "getOutputDataType expects output 0 of one input and non-null pointers");
  if (!supportedType(inputTypes[0]))
    return fail(kiln::kPLUGIN_UNSUPPORTED, std::string("input type ") +
                                               std::to_string(static_cast<int>(inputTypes[0])) +
                                               " is not supported (fp32 or fp16 only)");
  *outputType = inputTypes[0];
  return kiln::kPLUGIN_SUCCESS;
}

int32_t ScaleBiasPlugin::getOutputDimensions(int32_t outputIndex, const kiln::DimsExprs* inputs,
                                             int32_t nbInputs, kiln::IExprBuilder& /*exprBuilder*/,
                                             kiln::DimsExprs* output) noexcept {
  if (outputIndex != 0 || nbInputs != 1 || !inputs || !output)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT,
                "getOutputDimensions expects output 0 of one input and non-null pointers");
  if (inputs[0].nbDims < 0 || inputs[0].nbDims > kiln::Dims::kMaxDims)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "input rank is out of range");
  *output = inputs[0];  // elementwise: the output has the input's shape, expression for expression
  return kiln::kPLUGIN_SUCCESS;
}

bool ScaleBiasPlugin::supportsFormatCombination(int32_t pos, const PluginTensorDesc* inOut,
                                                int32_t nbInputs, int32_t nbOutputs) noexcept {
  if (!inOut || nbInputs != 1 || nbOutputs != 1 || pos < 0 || pos > 1) return false;
  const PluginTensorDesc& d = inOut[pos];
  // CPU always; CUDA when the library was built with its kernel (scale_bias_cuda.cu).
  if (d.format != TensorFormat::kLINEAR || !supportedDevice(d.device)) return false;
  if (pos == 0) return supportedType(d.type);
  return d.type == inOut[0].type && d.device == inOut[0].device;
}

int32_t ScaleBiasPlugin::configurePlugin(const kiln::DynamicPluginTensorDesc* inputs,
                                         int32_t nbInputs,
                                         const kiln::DynamicPluginTensorDesc* outputs,
                                         int32_t nbOutputs) noexcept {
  if (!inputs || !outputs || nbInputs != 1 || nbOutputs != 1)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "configurePlugin expects one input and one output");
  const PluginTensorDesc& in = inputs[0].desc;
  const PluginTensorDesc& out = outputs[0].desc;
  if (!supportedType(in.type) || out.type != in.type)
    return fail(kiln::kPLUGIN_UNSUPPORTED, "input and output must both be fp32 or both be fp16");
  if (in.format != TensorFormat::kLINEAR || out.format != TensorFormat::kLINEAR)
    return fail(kiln::kPLUGIN_UNSUPPORTED, "only the linear format is supported");
  if (in.dims != out.dims)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "input and output dims differ");
  configuredType_ = static_cast<int32_t>(in.type);
  return kiln::kPLUGIN_SUCCESS;
}

int32_t ScaleBiasPlugin::getWorkspaceSize(const kiln::DynamicPluginTensorDesc*, int32_t,
                                          const kiln::DynamicPluginTensorDesc*, int32_t,
                                          size_t* bytes) const noexcept {
  if (!bytes) return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "getWorkspaceSize got a null pointer");
  *bytes = 0;
  return kiln::kPLUGIN_SUCCESS;
}

int32_t ScaleBiasPlugin::onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                                       const PluginTensorDesc* outputs,
                                       int32_t nbOutputs) noexcept {
  if (!inputs || !outputs || nbInputs != 1 || nbOutputs != 1)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "onShapeChange expects one input and one output");
  if (inputs[0].dims != outputs[0].dims)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "input and output dims differ");
  return kiln::kPLUGIN_SUCCESS;
}

int32_t ScaleBiasPlugin::attachToContext(kiln::IPluginContextResources* resources) noexcept {
  if (!resources) return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "attachToContext got null resources");
  return kiln::kPLUGIN_SUCCESS;
}

int32_t ScaleBiasPlugin::enqueue(const PluginTensorDesc* inputDesc,
                                 const PluginTensorDesc* outputDesc, const void* const* inputs,
                                 void* const* outputs, void* /*workspace*/,
                                 [[maybe_unused]] kiln::Stream stream) noexcept {
  if (!inputDesc || !outputDesc || !inputs || !outputs)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "enqueue got a null pointer");
  const PluginTensorDesc& in = inputDesc[0];
  const PluginTensorDesc& out = outputDesc[0];
  if (!supportedDevice(in.device) || out.device != in.device)
    return fail(kiln::kPLUGIN_UNSUPPORTED,
                "input and output must both be on the CPU (or both on CUDA where built with it)");
  if (!supportedType(in.type) || out.type != in.type || in.format != TensorFormat::kLINEAR ||
      out.format != TensorFormat::kLINEAR)
    return fail(kiln::kPLUGIN_UNSUPPORTED, "enqueue got an unsupported type or format");
  if (configuredType_ != -1 && configuredType_ != static_cast<int32_t>(in.type))
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "enqueue type differs from the configured type");
  const int64_t n = elementCount(in.dims);
  if (n < 0 || in.dims != out.dims)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "invalid or mismatched input and output dims");
  if (n == 0) return kiln::kPLUGIN_SUCCESS;
  if (!inputs[0] || !outputs[0]) return fail(kiln::kPLUGIN_INVALID_ARGUMENT, "null tensor data");

#if KILN_EXAMPLE_CUDA
  if (in.device == kiln::DeviceKind::kCUDA) {
    const int32_t e = launchScaleBias(inputs[0], outputs[0], n, scale_, bias_,
                                      in.type == DataType::kHALF, stream);
    if (e != 0)
      return fail(kiln::kPLUGIN_FAILURE,
                  std::string("CUDA kernel launch failed: ") + scaleBiasCudaErrorName(e));
    return kiln::kPLUGIN_SUCCESS;
  }
#endif
  // Elementwise, so running in place (input == output) is fine.
  if (in.type == DataType::kFLOAT) {
    const float* x = static_cast<const float*>(inputs[0]);
    float* y = static_cast<float*>(outputs[0]);
    scaleBias(
        n, scale_, bias_, [x](int64_t i) { return x[i]; }, [y](int64_t i, float v) { y[i] = v; });
  } else {
    // FP16 in and out, FP32 arithmetic, rounded once to nearest even on the way out.
    const uint16_t* x = static_cast<const uint16_t*>(inputs[0]);
    uint16_t* y = static_cast<uint16_t*>(outputs[0]);
    scaleBias(
        n, scale_, bias_, [x](int64_t i) { return kiln::halfToFloat(x[i]); },
        [y](int64_t i, float v) { y[i] = kiln::floatToHalf(v); });
  }
  return kiln::kPLUGIN_SUCCESS;
}

size_t ScaleBiasPlugin::getSerializationSize() const noexcept { return kSerializedSize; }

int32_t ScaleBiasPlugin::serialize(void* buffer, size_t length) const noexcept {
  if (!buffer || length < kSerializedSize)
    return fail(kiln::kPLUGIN_INVALID_ARGUMENT,
                "serialize needs a buffer of " + std::to_string(kSerializedSize) + " bytes");
  kiln::BufferWriter w(buffer, length);
  w.write(kMagic);
  w.write(kLayoutVersion);
  w.write(scale_);
  w.write(bias_);
  w.write(configuredType_);
  return w.ok() ? kiln::kPLUGIN_SUCCESS : fail(kiln::kPLUGIN_FAILURE, "serialize overflowed");
}

ScaleBiasPlugin* ScaleBiasPlugin::deserialize(const void* data, size_t length, std::string& error) {
  kiln::BufferReader r(data, length);
  uint32_t magic = 0, version = 0;
  float scale = 0, bias = 0;
  int32_t type = -1;
  if (!r.read(magic) || magic != kMagic) {
    error = "the bytes are not a serialized ScaleBias (bad magic or too short)";
    return nullptr;
  }
  if (!r.read(version) || version != kLayoutVersion) {
    error = "unsupported serialized layout version " + std::to_string(version) + " (expected " +
            std::to_string(kLayoutVersion) + ")";
    return nullptr;
  }
  if (!r.read(scale) || !r.read(bias) || !r.read(type) || !r.finished()) {
    error = "serialized ScaleBias has " + std::to_string(length) + " bytes, expected " +
            std::to_string(kSerializedSize);
    return nullptr;
  }
  if (!std::isfinite(scale) || !std::isfinite(bias)) {
    error = "serialized scale or bias is not finite";
    return nullptr;
  }
  if (type != -1 && !supportedType(type)) {
    error = "serialized configured type " + std::to_string(type) + " is not fp32 or fp16";
    return nullptr;
  }
  auto* p = new (std::nothrow) ScaleBiasPlugin(scale, bias);
  if (!p) {
    error = "out of memory";
    return nullptr;
  }
  p->configuredType_ = type;
  return p;
}

kiln::IPlugin* ScaleBiasPlugin::clone() const noexcept {
  try {
    auto* p = new ScaleBiasPlugin(scale_, bias_);
    p->configuredType_ = configuredType_;
    p->namespace_ = namespace_;  // guarantee 7: a clone reports its source's namespace
    return p;
  } catch (...) {
    fail(kiln::kPLUGIN_FAILURE, "clone ran out of memory");
    return nullptr;
  }
}

}  // namespace kiln_example
