// The CUDA backend's kernels implement kiln::Kernel (backends/kernel.h) directly: run() enqueues
// on ctx.stream and may use ctx.libraries. This header includes no CUDA header.
#pragma once

#include <span>

#include "backends/kernel.h"

namespace kiln::cuda {

using kiln::Kernel;
using kiln::KernelConfig;
using kiln::RunContext;
using kiln::Tactic;

// The per-family lists behind each op's cudaTactics() (tactics.cpp; each defined beside its
// kernels); empty span for a type the family does not own.
std::span<const Tactic> mathTactics(LayerType type);          // math*.cu
std::span<const Tactic> denseTactics(LayerType type);         // dense*.cu / *.cpp

}  // namespace kiln::cuda
