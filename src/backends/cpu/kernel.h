// How the CPU backend implements a built-in layer: for each layer type, an ordered list of
// tactics (oneDNN style: faster ones first, the plain reference last). Each tactic either makes a
// kernel for a configuration or says why it cannot.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kernel_config.h"
#include "core/graph.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::cpu {

using kiln::KernelConfig;

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Scratch bytes run() needs; the caller passes that much (aligned to 64) as `workspace`.
  virtual size_t workspaceSize() const { return 0; }
  // Must be safe to call from several threads at once, each with its own buffers: all mutable
  // state lives in the buffers and the workspace.
  virtual Status run(const void* const* inputs, void* const* outputs, void* workspace) const = 0;
};

struct Tactic {
  const char* name;
  // A kernel for the configuration, or nullptr with *whyNot saying why this tactic declines.
  std::unique_ptr<Kernel> (*create)(const KernelConfig& config, std::string* whyNot);
};

// The tactics for a layer type, reference last; empty for types the CPU backend lacks.
std::span<const Tactic> tacticsFor(LayerType type);
const Tactic* findTactic(LayerType type, std::string_view name);

// Per-layer tactic lists behind tacticsFor (each defined next to its kernels).
std::span<const Tactic> convolutionTactics();
std::span<const Tactic> poolingTactics();
std::span<const Tactic> matrixMultiplyTactics();
std::span<const Tactic> gemmTactics();
std::span<const Tactic> elementwiseTactics();
std::span<const Tactic> activationTactics();
std::span<const Tactic> softmaxTactics();
std::span<const Tactic> concatenationTactics();
std::span<const Tactic> shuffleTactics();
std::span<const Tactic> reduceTactics();
std::span<const Tactic> reformatTactics();
std::span<const Tactic> selectTactics();
std::span<const Tactic> gatherTactics();
std::span<const Tactic> sliceTactics();
std::span<const Tactic> paddingTactics();
std::span<const Tactic> resizeTactics();
std::span<const Tactic> tileTactics();
std::span<const Tactic> expandTactics();
std::span<const Tactic> deconvolutionTactics();
std::span<const Tactic> normalizationTactics();
std::span<const Tactic> lrnTactics();
std::span<const Tactic> roiAlignTactics();

}  // namespace kiln::cpu
