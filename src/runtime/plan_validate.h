// The invariants of a plan that its bytes alone cannot show: indices in range, sizes that agree,
// offsets inside the arena, a data flow in execution order, parameters that fit their inputs.
// The reader runs it on every plan it loads and the writer on every plan it writes, so a plan that
// kiln writes is one that kiln loads.
#pragma once

#include "core/plan.h"
#include "kiln/status.h"

namespace kiln::plan {

// kCorruptData naming the section, the item (index and name) and what is wrong, or ok.
// Runs validatePlanShapes last.
Status validatePlan(const Plan& plan);

// For every built-in step: shape inference over its input tensors must succeed and give exactly
// its output tensors' dims and types (so kernels can trust the shapes they are given). Assumes the
// rest of validatePlan passed (indices in range, dims valid).
Status validatePlanShapes(const Plan& plan);

}  // namespace kiln::plan
