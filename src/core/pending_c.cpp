// TEMPORARY placeholder while the real implementation is written; the owner deletes this file.
#include "core/shape_inference.h"
#include "backends/cpu/kernel.h"
namespace kiln {
Status inferResize(const ResizeParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferResize: not implemented yet"); }
Status inferDeconvolution(const DeconvolutionParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferDeconvolution: not implemented yet"); }
Status inferNormalization(const NormalizationParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferNormalization: not implemented yet"); }
Status inferLrn(const LrnParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferLrn: not implemented yet"); }
Status inferRoiAlign(const RoiAlignParams&, const std::vector<TensorShape>&, std::vector<TensorShape>&) { return unsupported("inferRoiAlign: not implemented yet"); }
namespace cpu { std::span<const Tactic> resizeTactics() { return {}; } }
namespace cpu { std::span<const Tactic> deconvolutionTactics() { return {}; } }
namespace cpu { std::span<const Tactic> normalizationTactics() { return {}; } }
namespace cpu { std::span<const Tactic> lrnTactics() { return {}; } }
namespace cpu { std::span<const Tactic> roiAlignTactics() { return {}; } }
}  // namespace kiln
