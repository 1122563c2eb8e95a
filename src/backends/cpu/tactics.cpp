#include "backends/cpu/kernel.h"

namespace kiln::cpu {

std::span<const Tactic> tacticsFor(LayerType type) {
  switch (type) {
    case LayerType::kCONVOLUTION:
      return convolutionTactics();
    case LayerType::kPOOLING:
      return poolingTactics();
    case LayerType::kMATRIX_MULTIPLY:
      return matrixMultiplyTactics();
    case LayerType::kGEMM:
      return gemmTactics();
    case LayerType::kELEMENTWISE:
      return elementwiseTactics();
    case LayerType::kACTIVATION:
      return activationTactics();
    case LayerType::kSOFTMAX:
      return softmaxTactics();
    case LayerType::kCONCATENATION:
      return concatenationTactics();
    case LayerType::kSHUFFLE:
      return shuffleTactics();
    case LayerType::kREDUCE:
      return reduceTactics();
    case LayerType::kREFORMAT:
      return reformatTactics();
    case LayerType::kSELECT:
      return selectTactics();
    case LayerType::kGATHER:
      return gatherTactics();
    case LayerType::kSLICE:
      return sliceTactics();
    case LayerType::kPADDING:
      return paddingTactics();
    case LayerType::kRESIZE:
      return resizeTactics();
    case LayerType::kTILE:
      return tileTactics();
    case LayerType::kEXPAND:
      return expandTactics();
    case LayerType::kDECONVOLUTION:
      return deconvolutionTactics();
    case LayerType::kNORMALIZATION:
      return normalizationTactics();
    case LayerType::kLRN:
      return lrnTactics();
    case LayerType::kROI_ALIGN:
      return roiAlignTactics();
    case LayerType::kCONSTANT:
    case LayerType::kPLUGIN:
      break;
  }
  return {};
}

const Tactic* findTactic(LayerType type, std::string_view name) {
  for (const Tactic& tactic : tacticsFor(type)) {
    if (name == tactic.name) return &tactic;
  }
  return nullptr;
}

}  // namespace kiln::cpu
