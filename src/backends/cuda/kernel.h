// The CUDA backend's kernels implement kiln::Kernel (backends/kernel.h) directly: run() enqueues
// on ctx.stream and may use ctx.libraries. Each op's CUDA tactics live in its unit
// (src/ops/<op>/<op>_cuda.*). This header includes no CUDA header.
#pragma once

#include "backends/kernel.h"

namespace kiln::cuda {

using kiln::Kernel;
using kiln::KernelConfig;
using kiln::RunContext;
using kiln::Tactic;

}  // namespace kiln::cuda
