// Evaluating one built-in layer at build time, on the CPU backend. The only place the passes
// touch a backend: when the CPU backend's interface changes, this file is what adapts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "builder/graph.h"
#include "kiln/status.h"

namespace kiln::passes {

// A tensor on the host: shape, type, and its bytes (linear format).
struct HostTensor {
  TensorShape shape;
  std::shared_ptr<const std::vector<uint8_t>> bytes;
};

// Runs built-in `node` on `inputs` with the first CPU tactic that accepts the configuration
// (faster ones first, the reference last). `outputs` come in with their shapes set and leave with
// their bytes. Fails, saying why, when no tactic accepts it or the kernel reports an error.
Status evaluateOnCpu(const GraphNode& node, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& outputs);

}  // namespace kiln::passes
