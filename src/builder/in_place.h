// In-place residuals (issue 9, "the residual add written in place where liveness allows"): a
// layer that adds a residual input to its result (a ResNet bottleneck's last convolution, a
// transformer's output projection) on a tactic that allows it (Tactic::residualInPlace: cuBLASLt's
// C == D) writes its output over the residual when nothing reads the residual afterwards. The
// output then shares the residual's arena bytes, so the block's peak holds one tensor of that
// size where it held two.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "core/plan.h"

namespace kiln {

// Updates `home` (aliasReshapes' answer: per tensor, the tensor whose bytes it uses) so that such
// outputs, and the names that alias them, use their residual's home. The conditions: the tactic
// allows it; residual and output are arena activations of one type, format and size, the output
// still its own home; no other input of the step shares the residual's bytes; and no later step
// reads them. Returns how many outputs were placed so.
int32_t aliasResidualsInPlace(const plan::Plan& plan, const Backend& backend,
                              std::vector<int32_t>& home);

}  // namespace kiln
