#include "backends/cuda/resource_probe_plugin.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace kiln::testing {
namespace {

std::mutex recordsMutex;
std::vector<ResourceProbeRecord> records;

class ResourceProbe final : public IPlugin {
 public:
  const char* getPluginName() const noexcept override { return "ResourceProbe"; }
  const char* getPluginVersion() const noexcept override { return "1"; }
  void setPluginNamespace(const char* ns) noexcept override { ns_ = ns ? ns : ""; }
  const char* getPluginNamespace() const noexcept override { return ns_.c_str(); }
  int32_t getNbOutputs() const noexcept override { return 1; }
  int32_t getOutputDataType(int32_t, const DataType* in, int32_t n,
                            DataType* out) const noexcept override {
    if (n != 1 || !out) return kPLUGIN_INVALID_ARGUMENT;
    *out = in[0];
    return kPLUGIN_SUCCESS;
  }
  int32_t getOutputDimensions(int32_t, const DimsExprs* in, int32_t n, IExprBuilder&,
                              DimsExprs* out) noexcept override {
    if (n != 1 || !out) return kPLUGIN_INVALID_ARGUMENT;
    *out = in[0];
    return kPLUGIN_SUCCESS;
  }
  bool supportsFormatCombination(int32_t pos, const PluginTensorDesc* io, int32_t,
                                 int32_t) noexcept override {
    return io[pos].type == DataType::kFLOAT && io[pos].format == TensorFormat::kLINEAR &&
           io[pos].device == DeviceKind::kCUDA;
  }
  int32_t configurePlugin(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                          int32_t) noexcept override {
    return kPLUGIN_SUCCESS;
  }
  int32_t onShapeChange(const PluginTensorDesc*, int32_t, const PluginTensorDesc*,
                        int32_t) noexcept override {
    return kPLUGIN_SUCCESS;
  }
  int32_t getWorkspaceSize(const DynamicPluginTensorDesc*, int32_t, const DynamicPluginTensorDesc*,
                           int32_t, size_t* bytes) const noexcept override {
    *bytes = 0;
    return kPLUGIN_SUCCESS;
  }
  int32_t initialize() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t terminate() noexcept override { return kPLUGIN_SUCCESS; }
  int32_t attachToContext(IPluginContextResources* r) noexcept override {
    if (!r) return kPLUGIN_INVALID_ARGUMENT;
    ResourceProbeRecord rec;
    rec.device = r->getDeviceKind();
    rec.deviceIndex = r->getDeviceIndex();
    rec.persistent = r->allocatePersistent(1 << 20, 256);
    rec.cublas = r->getCublasHandle();
    persistent_ = rec.persistent;
    cublas_ = rec.cublas;
    std::lock_guard<std::mutex> lock(recordsMutex);
    records.push_back(rec);
    return persistent_ && cublas_ ? kPLUGIN_SUCCESS : kPLUGIN_FAILURE;
  }
  int32_t detachFromContext() noexcept override {
    persistent_ = cublas_ = nullptr;
    return kPLUGIN_SUCCESS;
  }
  int32_t enqueue(const PluginTensorDesc* inDesc, const PluginTensorDesc*, const void* const* in,
                  void* const* out, void*, Stream stream) noexcept override {
    const int64_t n = volume(inDesc[0].dims);
    auto s = static_cast<cudaStream_t>(stream);
    if (!persistent_ || n * 4 > (1 << 20)) {
      // Build objects are timed without a context: plain copy and scale by a kernel-free path.
      if (cudaMemcpyAsync(out[0], in[0], n * 4, cudaMemcpyDeviceToDevice, s) != cudaSuccess)
        return kPLUGIN_FAILURE;
      return kPLUGIN_SUCCESS;
    }
    auto h = static_cast<cublasHandle_t>(cublas_);
    const float two = 2.f;
    if (cudaMemcpyAsync(persistent_, in[0], n * 4, cudaMemcpyDeviceToDevice, s) != cudaSuccess ||
        cublasSetStream(h, s) != CUBLAS_STATUS_SUCCESS ||
        cublasSscal(h, static_cast<int>(n), &two, static_cast<float*>(persistent_), 1) !=
            CUBLAS_STATUS_SUCCESS ||
        cudaMemcpyAsync(out[0], persistent_, n * 4, cudaMemcpyDeviceToDevice, s) != cudaSuccess)
      return kPLUGIN_FAILURE;
    return kPLUGIN_SUCCESS;
  }
  size_t getSerializationSize() const noexcept override { return 0; }
  int32_t serialize(void*, size_t length) const noexcept override {
    return length == 0 ? kPLUGIN_SUCCESS : kPLUGIN_INVALID_ARGUMENT;
  }
  IPlugin* clone() const noexcept override {
    auto* p = new (std::nothrow) ResourceProbe();
    if (p) p->ns_ = ns_;
    return p;
  }
  void destroy() noexcept override { delete this; }
  const char* getLastError() const noexcept override { return nullptr; }

 private:
  std::string ns_;
  void* persistent_ = nullptr;
  void* cublas_ = nullptr;
};

class ResourceProbeCreator final : public IPluginCreator {
 public:
  const char* getPluginName() const noexcept override { return "ResourceProbe"; }
  const char* getPluginVersion() const noexcept override { return "1"; }
  const PluginFieldCollection* getFieldNames() noexcept override { return &fields_; }
  IPlugin* createPlugin(const char*, const PluginFieldCollection*) noexcept override {
    return new (std::nothrow) ResourceProbe();
  }
  IPlugin* deserializePlugin(const char*, const void*, size_t length) noexcept override {
    return length == 0 ? new (std::nothrow) ResourceProbe() : nullptr;
  }
  const char* getLastError() const noexcept override { return nullptr; }

 private:
  PluginFieldCollection fields_;
};

}  // namespace

std::vector<ResourceProbeRecord> resourceProbeRecords() {
  std::lock_guard<std::mutex> lock(recordsMutex);
  return records;
}

void clearResourceProbeRecords() {
  std::lock_guard<std::mutex> lock(recordsMutex);
  records.clear();
}

IPluginCreator& resourceProbeCreator() {
  static ResourceProbeCreator creator;
  return creator;
}

}  // namespace kiln::testing
