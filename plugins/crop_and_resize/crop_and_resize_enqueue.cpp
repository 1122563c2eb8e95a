// CropAndResizePlugin::enqueue's work: check the tensors against the stored configuration, then
// run the CPU kernel (and report boxes whose image index is out of range) or, for kCUDA tensors,
// launch the CUDA kernel on the caller's stream (asynchronous; bad box indices give
// extrapolation_value but are not reported, since that would need a synchronisation).
#include <string>

#include "crop_and_resize_cpu.h"
#if defined(KILN_PLUGINS_CUDA) && KILN_PLUGINS_CUDA
#include "crop_and_resize_cuda.h"
#endif
#include "crop_and_resize_plugin.h"
#include "kiln/logger.h"

namespace kiln::plugins {
namespace {

std::string describe(const PluginTensorDesc& d) {
  return std::string(dataTypeName(d.type)) + " " + formatName(d.format) + " on " +
         (d.device == DeviceKind::kCPU ? "cpu" : "cuda");
}

// Product of the dims; false if one is negative or the product overflows.
bool elementCount(const Dims& d, int64_t& count) {
  count = 1;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0 || __builtin_mul_overflow(count, d.d[i], &count)) return false;
  return true;
}

}  // namespace

int32_t CropAndResizePlugin::enqueueChecked(const PluginTensorDesc* inputDesc,
                                            const PluginTensorDesc* outputDesc,
                                            const void* const* inputs, void* const* outputs,
                                            void* workspace, Stream stream) {
  const char* kMethod = "enqueue";
  if (!config_.configured())
    return fail(kPLUGIN_FAILURE, kMethod,
                "the plugin was never configured (neither configurePlugin() nor the serialized "
                "bytes of a configured plugin)");
  if (!inputDesc || !outputDesc || !inputs || !outputs)
    return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, "null tensor descriptions or buffers");
  const int32_t n = config_.nbInputs;
  static const char* const kTwo[] = {"feature_maps", "rois", "output"};
  static const char* const kThree[] = {"image", "boxes", "box_indices", "output"};
  const char* const* names = n == 2 ? kTwo : kThree;

  // The tensors must be what configuration decided (the builder reformats to it).
  PluginTensorDesc expected[4];
  describeCropAndResizeConfig(config_, expected);
  for (int32_t i = 0; i <= n; ++i) {
    const PluginTensorDesc& d = i < n ? inputDesc[i] : outputDesc[0];
    if (d.type != expected[i].type || d.format != expected[i].format ||
        d.device != expected[i].device)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  std::string(names[i]) + " is " + describe(d) +
                      " but the plugin is configured for " + describe(expected[i]));
  }
  ShapeView views[3];
  Dims dims[3];
  for (int32_t i = 0; i < n; ++i) {
    dims[i] = inputDesc[i].dims;
    views[i] = shapeOf(dims[i]);
    int64_t count = 0;
    if (!elementCount(dims[i], count) || dims[i].nbDims > Dims::kMaxDims)
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  std::string(names[i]) + " has unknown or invalid dims " + shapeString(views[i]));
  }
  std::string error = checkCropAndResizeShapes(views, n);
  if (!error.empty()) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, error);
  const Dims outDims = cropAndResizeOutputDims(dims, n, fields_.cropHeight, fields_.cropWidth);
  if (outDims != outputDesc[0].dims)
    return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                "output is " + shapeString(shapeOf(outputDesc[0].dims)) + " but should be " +
                    shapeString(shapeOf(outDims)));
  int64_t counts[4] = {};
  for (int32_t i = 0; i <= n; ++i)
    if (!elementCount(i < n ? dims[i] : outDims, counts[i]))
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod,
                  std::string(names[i]) + " has more elements than int64 can count");
  if (counts[n] == 0) return kPLUGIN_SUCCESS;  // nothing to write, so nothing needs reading
  for (int32_t i = 0; i < n; ++i)
    if (counts[i] > 0 && !inputs[i])
      return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, std::string(names[i]) + " buffer is null");
  if (!outputs[0]) return fail(kPLUGIN_INVALID_ARGUMENT, kMethod, "output buffer is null");

  CropAndResizeCpuArgs a;
  a.feature = inputs[0];
  a.featureType = config_.featureType;
  a.featureFormat = config_.featureFormat;
  a.n = dims[0].d[0];
  a.c = dims[0].d[1];
  a.h = dims[0].d[2];
  a.w = dims[0].d[3];
  a.boxes = inputs[1];
  a.boxesType = config_.boxesType;
  if (n == 2) {
    a.boxesPerImage = dims[1].d[1];
    a.numBoxes = dims[1].d[0] * dims[1].d[1];  // no overflow: the rois count fits
  } else {
    a.numBoxes = dims[1].d[0];
    a.boxIndices = static_cast<const int32_t*>(inputs[2]);
  }
  a.output = outputs[0];
  a.outputFormat = config_.outputFormat;
  a.cropHeight = fields_.cropHeight;
  a.cropWidth = fields_.cropWidth;
  a.method = fields_.method;
  a.extrapolationValue = fields_.extrapolationValue();

  if (config_.device == DeviceKind::kCUDA) {
#if defined(KILN_PLUGINS_CUDA) && KILN_PLUGINS_CUDA
    // The workspace getWorkspaceSize() asked for: these dims are the ones it was sized for.
    const size_t workspaceBytes =
        workspace ? cropAndResizeCudaWorkspaceSize(inputDesc[0], outputDesc[0]) : 0;
    error = cropAndResizeCuda(a, workspace, workspaceBytes, stream);
    if (!error.empty()) return fail(kPLUGIN_FAILURE, kMethod, error);
    return kPLUGIN_SUCCESS;
#else
    return fail(kPLUGIN_UNSUPPORTED, kMethod, "this plugin library was built without CUDA");
#endif
  }
  (void)workspace;
  (void)stream;  // the CPU kernel runs synchronously
  CropAndResizeCpuReport report;
  if (!cropAndResizeCpu(a, report)) return fail(kPLUGIN_FAILURE, kMethod, "out of memory");
  if (report.badBoxes > 0) {
    // One warning per enqueue, however many boxes are bad.
    std::string message = std::string(kCropAndResizeName) + " layer '" + layerName_ + "': box " +
                          std::to_string(report.firstBadBox) + " has box_indices value " +
                          std::to_string(report.firstBadIndex) + ", outside [0, " +
                          std::to_string(a.n) + "); its output is extrapolation_value";
    if (report.badBoxes > 1)
      message += " (" + std::to_string(report.badBoxes) + " such boxes in this enqueue)";
    getLogger().log(Severity::kWarning, message.c_str());
  }
  return kPLUGIN_SUCCESS;
}

}  // namespace kiln::plugins
