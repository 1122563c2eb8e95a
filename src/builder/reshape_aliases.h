// Reshapes that move no bytes, planned as aliases: a Shuffle whose transposes do not permute
// (Reshape, Flatten, Squeeze, Unsqueeze as ONNX exports write them) between two activations of
// one type in the linear format copies its input unchanged. Instead, the plan gives its output
// the input's arena bytes (a second tensor, with other dims, at the same offset). The step stays,
// on its reference tactic, whose copy is nothing when source and destination are one address
// (both backends check), so the plan still says which step makes each tensor. Transformer
// exports have about ten such reshapes per block; on the H200 each copy of a ViT-B/16 batch-64
// activation cost 15 µs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/plan.h"

namespace kiln {

// Marks such steps (tactic "reference") and returns, for each plan tensor, the tensor whose arena
// bytes it uses (itself unless it is an alias; chains resolve to their first tensor).
std::vector<int32_t> aliasReshapes(plan::Plan& plan);

}  // namespace kiln
