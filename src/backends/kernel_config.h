// What a backend tactic may look at to decide whether it can run a built-in layer and to prepare
// a kernel for it. Shared by the CPU and CUDA backends so that one configuration (and one timing
// cache key) describes a step on either.
#pragma once

#include <vector>

#include "core/graph.h"
#include "kiln/types.h"

namespace kiln {

struct KernelConfig {
  LayerType type = LayerType::kCONSTANT;
  LayerParams params;
  std::vector<PluginTensorDesc> inputs;
  std::vector<PluginTensorDesc> outputs;
  // Per input: the bytes when the input is a constant (weights; linear format, inputs[i].type),
  // else nullptr. Always host memory, also on CUDA (where run() gets the device copy as the input
  // pointer). A kernel may read or prepack them at creation; they outlive the kernel.
  std::vector<const void*> constantInputs;
};

}  // namespace kiln
