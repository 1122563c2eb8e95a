#include "runtime/workspace_placement.h"

#include <algorithm>
#include <utility>

namespace kiln {

WorkspacePlacement placeWorkspacesInArena(const plan::Plan& plan,
                                          const std::vector<uint64_t>& stepBytes) {
  WorkspacePlacement out;
  out.arenaBytes = plan.arenaBytes;
  out.offsets.assign(stepBytes.size(), 0);
  // Each activation's live steps: from the first step that touches it to the last.
  const int32_t none = -1;
  std::vector<std::pair<int32_t, int32_t>> live(plan.tensors.size(), {none, none});
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const auto touch = [&](int32_t t) {
      if (t < 0 || static_cast<size_t>(t) >= plan.tensors.size() ||
          plan.tensors[t].kind != plan::TensorKind::kACTIVATION)
        return;
      auto& [first, last] = live[t];
      if (first == none) first = static_cast<int32_t>(s);
      last = static_cast<int32_t>(s);
    };
    for (int32_t t : plan.steps[s].inputs) touch(t);
    for (int32_t t : plan.steps[s].outputs) touch(t);
  }
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (size_t s = 0; s < stepBytes.size() && s < plan.steps.size(); ++s) {
    if (stepBytes[s] == 0) continue;
    busy.clear();
    for (size_t t = 0; t < plan.tensors.size(); ++t) {
      const auto [first, last] = live[t];
      if (first == none || first > static_cast<int32_t>(s) || last < static_cast<int32_t>(s))
        continue;
      const plan::Tensor& x = plan.tensors[t];
      const uint64_t bytes = static_cast<uint64_t>(plan::tensorBytes(x.dims, x.type));
      busy.emplace_back(x.arenaOffset, x.arenaOffset + bytes);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + stepBytes[s] <= begin) break;  // fits in the hole before this tensor
      offset = std::max(
          offset, (end + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment);
    }
    out.offsets[s] = offset;
    out.arenaBytes = std::max(out.arenaBytes, offset + stepBytes[s]);
  }
  return out;
}

std::vector<uint64_t> builtinStepWorkspaces(const plan::Plan& plan) {
  std::vector<uint64_t> bytes(plan.steps.size(), 0);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    if (plan.steps[s].type != LayerType::kPLUGIN) bytes[s] = plan.steps[s].workspaceBytes;
  return bytes;
}

}  // namespace kiln
