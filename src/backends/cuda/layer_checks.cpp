#include "backends/cuda/layer_checks.h"

#include <vector>

#include "ops/op_table.h"

namespace kiln::cuda {

bool validateLayer(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
                   std::string* whyNot) {
  const config_checks::TensorRules rules{DeviceKind::kCUDA, nbInputs, true, linearOnly};
  if (!config_checks::checkTensors(c, layer, rules, whyNot)) return false;
  std::vector<TensorShape> expected;
  const Status st = inferLayerOutputs(c.type, c.params, config_checks::inputShapes(c), expected);
  return config_checks::checkOutput(c, layer, st, expected, whyNot);
}

}  // namespace kiln::cuda
