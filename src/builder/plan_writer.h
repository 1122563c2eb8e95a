// Internal to the plan writer and its tests; the builder calls kiln::plan::writePlan (core/plan.h).
#pragma once

#include <cstdint>
#include <vector>

#include "core/plan.h"

namespace kiln::plan::detail {

// Serializes without running validatePlan first, so tests can produce well-formed bytes of an
// invalid plan and check that the reader refuses them. Fails only where the plan cannot be
// encoded at all (a parameter variant that does not match its type, a null weight, a count or
// string beyond the format's limits).
Status writePlanUnvalidated(const Plan& plan, std::vector<uint8_t>& bytes);

}  // namespace kiln::plan::detail
