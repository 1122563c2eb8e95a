// TEMPORARY placeholder while the real implementation is written; the owner deletes this file.
#include "core/shape_inference.h"
#include "backends/cpu/kernel.h"
namespace kiln {
Status inferSelect(const SelectParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferSelect: not implemented yet"); }
namespace cpu { std::span<const Tactic> selectTactics() { return {}; } }
}  // namespace kiln
