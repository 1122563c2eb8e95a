// TEMPORARY placeholder while the real implementation is written; the owner deletes this file.
#include "core/shape_inference.h"
#include "backends/cpu/kernel.h"
namespace kiln {
Status inferGather(const GatherParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferGather: not implemented yet"); }
Status inferSlice(const SliceParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferSlice: not implemented yet"); }
Status inferPadding(const PaddingParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferPadding: not implemented yet"); }
Status inferTile(const TileParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferTile: not implemented yet"); }
Status inferExpand(const ExpandParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferExpand: not implemented yet"); }
namespace cpu { std::span<const Tactic> gatherTactics() { return {}; } }
namespace cpu { std::span<const Tactic> sliceTactics() { return {}; } }
namespace cpu { std::span<const Tactic> paddingTactics() { return {}; } }
namespace cpu { std::span<const Tactic> tileTactics() { return {}; } }
namespace cpu { std::span<const Tactic> expandTactics() { return {}; } }
}  // namespace kiln
