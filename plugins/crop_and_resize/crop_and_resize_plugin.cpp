#include "crop_and_resize_plugin.h"

#include "crop_and_resize_serial.h"
#if defined(KILN_PLUGINS_CUDA) && KILN_PLUGINS_CUDA
#include "crop_and_resize_cuda.h"
#endif

namespace kiln::plugins {
namespace {

// The shape view of a list of expressions; false (with `error`) for a malformed one. Dims that
// are not constant are unknown, and the checks skip them.
bool viewExprs(const DimsExprs& e, int32_t index, ShapeView& view, std::string& error) {
  if (e.nbDims < 0 || e.nbDims > Dims::kMaxDims) {
    error = "input " + std::to_string(index) + " has rank " + std::to_string(e.nbDims);
    return false;
  }
  view = ShapeView();
  view.nbDims = e.nbDims;
  for (int32_t i = 0; i < e.nbDims; ++i) {
    if (!e.d[i]) {
      error = "input " + std::to_string(index) + " dim " + std::to_string(i) + " is null";
      return false;
    }
    if (e.d[i]->isConstant() && e.d[i]->getConstantValue() >= 0)
      view.d[i] = e.d[i]->getConstantValue();
  }
  return true;
}

bool knownDims(const Dims& d) {
  if (d.nbDims < 0 || d.nbDims > Dims::kMaxDims) return false;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return false;
  return true;
}

const char* tensorName(int32_t index, int32_t nbInputs) {
  static const char* const kTwo[] = {"feature_maps", "rois", "output"};
  static const char* const kThree[] = {"image", "boxes", "box_indices", "output"};
  return nbInputs == 2 ? kTwo[index] : kThree[index];
}

}  // namespace

CropAndResizePlugin::CropAndResizePlugin(const char* layerName, const CropAndResizeFields& fields,
                                         const CropAndResizeConfig& config)
    : layerName_(layerName ? layerName : ""), fields_(fields), config_(config) {}

int32_t CropAndResizePlugin::fail(int32_t code, const char* method,
                                  const std::string& message) const noexcept {
  try {
    lastError_ =
        std::string(kCropAndResizeName) + " layer '" + layerName_ + "': " + method + ": " + message;
  } catch (...) {
    lastError_.clear();  // out of memory: no message rather than a throw
  }
  return code;
}

const char* CropAndResizePlugin::getLastError() const noexcept {
  return lastError_.empty() ? nullptr : lastError_.c_str();
}

const char* CropAndResizePlugin::getPluginName() const noexcept { return kCropAndResizeName; }
const char* CropAndResizePlugin::getPluginVersion() const noexcept { return kCropAndResizeVersion; }

void CropAndResizePlugin::setPluginNamespace(const char* pluginNamespace) noexcept {
  try {
    namespace_ = pluginNamespace ? pluginNamespace : "";
  } catch (...) {
    fail(kPLUGIN_FAILURE, "setPluginNamespace", "out of memory");
  }
}

const char* CropAndResizePlugin::getPluginNamespace() const noexcept { return namespace_.c_str(); }

int32_t CropAndResizePlugin::getOutputDataType(int32_t outputIndex, const DataType* inputTypes,
                                               int32_t nbInputs,
                                               DataType* outputType) const noexcept {
  const char* kMethod = "getOutputDataType";
  if (outputIndex != 0)
    return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                "output " + std::to_string(outputIndex) + " does not exist (there is 1 output)");
  if (nbInputs != 2 && nbInputs != 3)
    return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                "takes 2 or 3 inputs, got " + std::to_string(nbInputs));
  if (!inputTypes || !outputType) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, "null type array");
  if (!isFloatType(inputTypes[0]))
    return fail(kPLUGIN_UNSUPPORTED, kMethod,
                std::string(tensorName(0, nbInputs)) + " must be fp32, fp16 or bf16");
  *outputType = inputTypes[0];
  return kPLUGIN_SUCCESS;
}

int32_t CropAndResizePlugin::getOutputDimensions(int32_t outputIndex, const DimsExprs* inputs,
                                                 int32_t nbInputs, IExprBuilder& exprBuilder,
                                                 DimsExprs* output) noexcept {
  const char* kMethod = "getOutputDimensions";
  try {
    if (outputIndex != 0)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  "output " + std::to_string(outputIndex) + " does not exist (there is 1 output)");
    if (!inputs || !output) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, "null dims");
    if (nbInputs != 2 && nbInputs != 3)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  "takes 2 inputs (feature_maps, rois) or 3 (image, boxes, box_indices), got " +
                      std::to_string(nbInputs));
    ShapeView views[3];
    std::string error;
    for (int32_t i = 0; i < nbInputs; ++i)
      if (!viewExprs(inputs[i], i, views[i], error))
        return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, error);
    error = checkCropAndResizeShapes(views, nbInputs);
    if (!error.empty()) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, error);
    const IDimensionExpr* h = exprBuilder.constant(fields_.cropHeight);
    const IDimensionExpr* w = exprBuilder.constant(fields_.cropWidth);
    if (!h || !w) return fail(kPLUGIN_FAILURE, kMethod, "the expression builder failed");
    DimsExprs out;
    if (nbInputs == 2) {
      out.nbDims = 5;
      out.d[0] = inputs[0].d[0];  // N
      out.d[1] = inputs[1].d[1];  // B
      out.d[2] = inputs[0].d[1];  // C
      out.d[3] = h;
      out.d[4] = w;
    } else {
      out.nbDims = 4;
      out.d[0] = inputs[1].d[0];  // K
      out.d[1] = inputs[0].d[1];  // C
      out.d[2] = h;
      out.d[3] = w;
    }
    *output = out;
    return kPLUGIN_SUCCESS;
  } catch (...) {
    return fail(kPLUGIN_FAILURE, kMethod, "out of memory");
  }
}

bool CropAndResizePlugin::supportsFormatCombination(int32_t pos, const PluginTensorDesc* inOut,
                                                    int32_t nbInputs, int32_t nbOutputs) noexcept {
  try {
    return cropAndResizeSupports(pos, inOut, nbInputs, nbOutputs, nullptr);
  } catch (...) {
    return false;
  }
}

int32_t CropAndResizePlugin::configurePlugin(const DynamicPluginTensorDesc* inputs,
                                             int32_t nbInputs,
                                             const DynamicPluginTensorDesc* outputs,
                                             int32_t nbOutputs) noexcept {
  const char* kMethod = "configurePlugin";
  try {
    if ((nbInputs != 2 && nbInputs != 3) || nbOutputs != 1)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  "takes 2 or 3 inputs and 1 output, got " + std::to_string(nbInputs) + " and " +
                      std::to_string(nbOutputs));
    if (!inputs || !outputs) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, "null descriptions");
    PluginTensorDesc all[4];
    for (int32_t i = 0; i < nbInputs; ++i) all[i] = inputs[i].desc;
    all[nbInputs] = outputs[0].desc;
    std::string error = checkCropAndResizeConfig(all, nbInputs, nbOutputs);
    if (!error.empty()) return fail(kPLUGIN_UNSUPPORTED, kMethod, error);
    // The shape rules must hold at both corners of the box (and with -1 where dims vary).
    for (int32_t corner = 0; corner < 3; ++corner) {
      ShapeView views[3];
      Dims in[3];
      bool allKnown = true;
      for (int32_t i = 0; i < nbInputs; ++i) {
        in[i] = corner == 0 ? inputs[i].desc.dims : corner == 1 ? inputs[i].min : inputs[i].max;
        views[i] = shapeOf(in[i]);
        allKnown = allKnown && knownDims(in[i]);
      }
      const Dims& out = corner == 0   ? outputs[0].desc.dims
                        : corner == 1 ? outputs[0].min
                                      : outputs[0].max;
      error = checkCropAndResizeShapes(views, nbInputs);
      if (error.empty() && allKnown && knownDims(out)) {
        const Dims expected =
            cropAndResizeOutputDims(in, nbInputs, fields_.cropHeight, fields_.cropWidth);
        if (expected != out)
          error = "output is " + shapeString(shapeOf(out)) + " but should be " +
                  shapeString(shapeOf(expected));
      }
      if (!error.empty())
        return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                    std::string(corner == 0   ? ""
                                : corner == 1 ? "at the profile's min: "
                                              : "at the profile's max: ") +
                        error);
    }
    CropAndResizeConfig c;
    c.nbInputs = nbInputs;
    c.featureType = inputs[0].desc.type;
    c.featureFormat = inputs[0].desc.format;
    c.boxesType = inputs[1].desc.type;
    c.outputFormat = outputs[0].desc.format;
    c.device = inputs[0].desc.device;
    config_ = c;
    return kPLUGIN_SUCCESS;
  } catch (...) {
    return fail(kPLUGIN_FAILURE, kMethod, "out of memory");
  }
}

int32_t CropAndResizePlugin::getWorkspaceSize(const DynamicPluginTensorDesc* inputs,
                                              int32_t nbInputs,
                                              const DynamicPluginTensorDesc* outputs,
                                              int32_t nbOutputs, size_t* bytes) const noexcept {
  if (!bytes) return fail(kPLUGIN_INVALID_ARGUMENT, "getWorkspaceSize", "null result pointer");
  // The CPU kernel keeps its two small per-box tables on the heap. The CUDA kernel can use a
  // channels-last copy of a linear feature map. For one shape that is the enqueue's own rule; over
  // a box the copy's size at the largest feature map, whatever the output (the rule skips the copy
  // for some outputs, and enqueue() may take it at any shape inside the box).
  *bytes = 0;
#if defined(KILN_PLUGINS_CUDA) && KILN_PLUGINS_CUDA
  if (inputs && nbInputs >= 1 && inputs[0].desc.device == DeviceKind::kCUDA &&
      inputs[0].max.nbDims == 4 && knownDims(inputs[0].max) && outputs && nbOutputs >= 1 &&
      knownDims(outputs[0].max)) {
    bool oneShape = outputs[0].min == outputs[0].max;
    for (int32_t i = 0; i < nbInputs; ++i) oneShape = oneShape && inputs[i].min == inputs[i].max;
    const Dims& d = inputs[0].max;
    if (oneShape) {
      PluginTensorDesc image = inputs[0].desc, output = outputs[0].desc;
      image.dims = d;
      output.dims = outputs[0].max;
      *bytes = cropAndResizeCudaWorkspaceSize(image, output);
    } else {
      *bytes = cropAndResizeCudaWorkspaceSize(inputs[0].desc.type, inputs[0].desc.format, d.d[0],
                                              d.d[1], d.d[2], d.d[3], INT64_MAX);
    }
  }
#else
  (void)inputs;
  (void)nbInputs;
  (void)outputs;
  (void)nbOutputs;
#endif
  return kPLUGIN_SUCCESS;
}

int32_t CropAndResizePlugin::onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                                           const PluginTensorDesc* outputs,
                                           int32_t nbOutputs) noexcept {
  const char* kMethod = "onShapeChange";
  try {
    if (nbInputs != config_.nbInputs || nbOutputs != 1 || !inputs || !outputs)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  "takes the " + std::to_string(config_.nbInputs) +
                      " inputs and 1 output it was configured with");
    ShapeView views[3];
    Dims in[3];
    for (int32_t i = 0; i < nbInputs; ++i) {
      in[i] = inputs[i].dims;
      views[i] = shapeOf(in[i]);
      if (!knownDims(in[i]))
        return fail(
            kPLUGIN_INVALID_ARGUMENT, kMethod,
            std::string(tensorName(i, nbInputs)) + " has unknown dims " + shapeString(views[i]));
    }
    std::string error = checkCropAndResizeShapes(views, nbInputs);
    if (!error.empty()) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, error);
    const Dims expected =
        cropAndResizeOutputDims(in, nbInputs, fields_.cropHeight, fields_.cropWidth);
    if (expected != outputs[0].dims)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  "output is " + shapeString(shapeOf(outputs[0].dims)) + " but should be " +
                      shapeString(shapeOf(expected)));
    return kPLUGIN_SUCCESS;
  } catch (...) {
    return fail(kPLUGIN_FAILURE, kMethod, "out of memory");
  }
}

int32_t CropAndResizePlugin::attachToContext(IPluginContextResources* resources) noexcept {
  resources_ = resources;
  return kPLUGIN_SUCCESS;
}

int32_t CropAndResizePlugin::detachFromContext() noexcept {
  resources_ = nullptr;
  return kPLUGIN_SUCCESS;
}

size_t CropAndResizePlugin::getSerializationSize() const noexcept {
  return cropAndResizeSerializedSize();
}

int32_t CropAndResizePlugin::serialize(void* buffer, size_t length) const noexcept {
  if (!writeCropAndResize(fields_, config_, buffer, length))
    return fail(kPLUGIN_INVALID_ARGUMENT, "serialize",
                "buffer of " + std::to_string(buffer ? length : 0) + " bytes; " +
                    std::to_string(cropAndResizeSerializedSize()) + " are needed");
  return kPLUGIN_SUCCESS;
}

IPlugin* CropAndResizePlugin::clone() const noexcept {
  try {
    auto* copy = new CropAndResizePlugin(*this);
    // A clone is a new object: not attached to this one's context, no error of its own yet.
    copy->resources_ = nullptr;
    copy->lastError_.clear();
    return copy;
  } catch (...) {
    fail(kPLUGIN_FAILURE, "clone", "out of memory");
    return nullptr;
  }
}

int32_t CropAndResizePlugin::enqueue(const PluginTensorDesc* inputDesc,
                                     const PluginTensorDesc* outputDesc, const void* const* inputs,
                                     void* const* outputs, void* workspace,
                                     Stream stream) noexcept {
  try {
    return enqueueChecked(inputDesc, outputDesc, inputs, outputs, workspace, stream);
  } catch (...) {
    return fail(kPLUGIN_FAILURE, "enqueue", "out of memory");
  }
}

}  // namespace kiln::plugins
