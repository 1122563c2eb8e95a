// The Activation op's CUDA element kernel for other ops' tactics (a Linear layer's activation
// after a cuBLASLt product): the same per-element function as the Activation layer's own tactic
// (activation_cuda.cu), so the formulas exist once. Plain C++ (no CUDA header).
#pragma once

#include <cstdint>

#include "backends/cuda/kernel.h"
#include "kiln/ops/activation.h"

namespace kiln::cuda::activation {

// y[i] = activation(x[i]) for i in [0, count), elements of the float type `type` (FP32, FP16 or
// BF16), computed in FP32 and rounded once on store; x == y (in place) is allowed, since each
// element is read once, before its own store. p.type must have a float form (not kNOT). Enqueued
// on ctx.stream, or run on the host under ctx.emulate.
Status launchFloatActivation(const ActivationParams& p, DataType type, const void* x, void* y,
                             int64_t count, const RunContext& ctx);

}  // namespace kiln::cuda::activation
