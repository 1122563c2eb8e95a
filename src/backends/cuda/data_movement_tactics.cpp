// Tactic lists of the CUDA data-movement family, and the validation every tactic of the family
// shares. Per layer: faster tactics first, kiln's plain per-element kernel ("reference") last.
#include <string>

#include "backends/cuda/data_movement.h"

namespace kiln::cuda {
namespace dm {

bool validateCommon(const KernelConfig& c, const char* layer, int nbInputs, bool linearOnly,
                    std::string* whyNot) {
  const config_checks::TensorRules rules{DeviceKind::kCUDA, nbInputs, true, linearOnly};
  if (!config_checks::checkTensors(c, layer, rules, whyNot)) return false;
  std::vector<TensorShape> expected;
  const Status st = inferLayerOutputs(c.type, c.params, config_checks::inputShapes(c), expected);
  return config_checks::checkOutput(c, layer, st, expected, whyNot);
}

namespace {

constexpr Tactic kShuffle[] = {{"reference", &createShuffle}};
constexpr Tactic kConcat[] = {{"copy2d", &createConcatCopy2D}, {"reference", &createConcat}};
constexpr Tactic kSlice[] = {{"reference", &createSlice}};
constexpr Tactic kPadding[] = {{"reference", &createPadding}};
constexpr Tactic kTile[] = {{"reference", &createTile}};
constexpr Tactic kExpand[] = {{"reference", &createExpand}};
constexpr Tactic kGather[] = {{"reference", &createGather}};
constexpr Tactic kSelect[] = {{"reference", &createSelect}};
constexpr Tactic kReformat[] = {{"reference", &createReformat}};
constexpr Tactic kResize[] = {{"reference", &createResize}};
constexpr Tactic kRoiAlign[] = {{"reference", &createRoiAlign}};

}  // namespace
}  // namespace dm

std::span<const Tactic> dataMovementTactics(LayerType type) {
  switch (type) {
    case LayerType::kSHUFFLE:
      return dm::kShuffle;
    case LayerType::kCONCATENATION:
      return dm::kConcat;
    case LayerType::kSLICE:
      return dm::kSlice;
    case LayerType::kPADDING:
      return dm::kPadding;
    case LayerType::kTILE:
      return dm::kTile;
    case LayerType::kEXPAND:
      return dm::kExpand;
    case LayerType::kGATHER:
      return dm::kGather;
    case LayerType::kSELECT:
      return dm::kSelect;
    case LayerType::kREFORMAT:
      return dm::kReformat;
    case LayerType::kRESIZE:
      return dm::kResize;
    case LayerType::kROI_ALIGN:
      return dm::kRoiAlign;
    default:
      return {};
  }
}

}  // namespace kiln::cuda
