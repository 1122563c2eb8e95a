#include "backends/cuda/kernel.h"

namespace kiln::cuda {

std::span<const Tactic> tacticsFor(LayerType type) {
  for (auto family : {dataMovementTactics, mathTactics, denseTactics}) {
    std::span<const Tactic> list = family(type);
    if (!list.empty()) return list;
  }
  return {};
}

const Tactic* findTactic(LayerType type, std::string_view name) {
  for (const Tactic& tactic : tacticsFor(type)) {
    if (name == tactic.name) return &tactic;
  }
  return nullptr;
}

}  // namespace kiln::cuda
