// libFuzzer target for the ONNX parser: any bytes must give a Status, never a crash, a leak, an
// out-of-bounds access or a hang. A model that parses into a small network is also built, so that
// whatever the parser lets through is checked by the builder's shape and parameter validation.
//
// kiln's builtin plugins are registered so that CropAndResize nodes reach the plugin path.
// The size guards keep one input to milliseconds: the fuzzer looks for bad handling of hostile
// bytes, not for the (legitimate) cost of building a large but valid network.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/onnx_parser.h"
#include "kiln/plugins.h"

namespace {

class QuietLogger : public kiln::ILogger {
 public:
  void log(kiln::Severity, const char*) noexcept override {}
};

void initOnce() {
  static const bool done = [] {
    static QuietLogger logger;
    kiln::setLogger(&logger);
    // A failure here (already registered) is harmless: the creators are there either way.
    (void)kiln::PluginRegistry::global().registerLibrary(*kiln::getBuiltinPluginLibrary(),
                                                         kiln::getBuiltinPluginLibraryPath());
    return true;
  }();
  (void)done;
}

// Under ASan the builder times every tactic of every layer: a 64x64 feature map with 16 channels
// already costs seconds per input, which starves the fuzzer. Larger networks are only parsed.
constexpr int32_t kMaxLayers = 48;
constexpr int64_t kMaxTensorElements = int64_t(1) << 13;
constexpr int64_t kMaxTotalElements = int64_t(1) << 16;

// Element count of dims, or -1 if any extent is negative or the count exceeds the limit.
int64_t boundedVolume(const kiln::Dims& dims) {
  if (dims.nbDims < 0 || dims.nbDims > kiln::Dims::kMaxDims) return -1;
  int64_t n = 1;
  for (int32_t i = 0; i < dims.nbDims; ++i) {
    if (dims.d[i] < 0) return -1;
    if (dims.d[i] > 0 && n > kMaxTensorElements / dims.d[i]) return -1;
    n *= dims.d[i];
  }
  return n;
}

// True if every tensor of the network is small enough to build in a few milliseconds.
bool isSmall(const kiln::INetworkDefinition& network) {
  if (network.getNbLayers() > kMaxLayers) return false;
  int64_t total = 0;
  auto add = [&total](const kiln::ITensor* t) {
    if (t == nullptr) return true;
    int64_t n = boundedVolume(t->getDimensions());
    if (n < 0) return false;
    total += n;
    return total <= kMaxTotalElements;
  };
  for (int32_t i = 0; i < network.getNbInputs(); ++i) {
    if (!add(network.getInput(i))) return false;
  }
  for (int32_t l = 0; l < network.getNbLayers(); ++l) {
    const kiln::ILayer* layer = network.getLayer(l);
    if (layer == nullptr) continue;
    for (int32_t i = 0; i < layer->getNbOutputs(); ++i) {
      if (!add(layer->getOutput(i))) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  initOnce();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  initOnce();  // the replay runner does not call LLVMFuzzerInitialize
  std::unique_ptr<kiln::INetworkDefinition> network = kiln::createNetwork();
  if (!kiln::parseOnnxBytes(data, size, "fuzz", *network).isOk()) return 0;
  if (!isSmall(*network)) return 0;
  kiln::BuilderConfig config;
  config.warmupRuns = 0;
  config.timingRuns = 1;
  config.maxWorkspaceBytes = size_t(64) << 20;
  std::unique_ptr<kiln::IBuilder> builder = kiln::createBuilder();
  std::vector<uint8_t> plan;
  (void)builder->buildSerializedNetwork(*network, config, plan);
  return 0;
}
