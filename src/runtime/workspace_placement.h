// A static plan's step workspaces placed in its activation arena, by liveness: a step's scratch
// lives only while that step runs, so it can take arena bytes that no tensor live at that step
// holds (the early steps of a CNN have large tensors, the late ones large product workspaces and
// small tensors). One buffer per context instead of an arena plus a workspace sized to the
// largest step. The engine places them at load with the sizes its kernels ask for then, and
// `kiln inspect` with the sizes the plan recorded, so both say the same where those agree.
#pragma once

#include <cstdint>
#include <vector>

#include "core/plan.h"

namespace kiln {

// Within the arena, like the separate workspace's own allocation.
constexpr uint64_t kWorkspaceAlignment = 256;

struct WorkspacePlacement {
  std::vector<uint64_t> offsets;  // per step, into the arena (0 where the step asks for none)
  uint64_t arenaBytes = 0;        // the plan's arena, grown where some workspace fit no hole
};

// `stepBytes`: per step of `plan` (static: no profiles), the workspace to place (0: none, or a
// step that uses another buffer). Each goes at the lowest aligned offset that overlaps no
// activation live at its step (from the step that writes it to the last that reads it), past
// the arena's end where no hole is large enough.
WorkspacePlacement placeWorkspacesInArena(const plan::Plan& plan,
                                          const std::vector<uint64_t>& stepBytes);

// Per step of `plan`, the workspace it records for a built-in step and 0 for a plugin step (whose
// workspace is apart): what `kiln inspect` and the builder place.
std::vector<uint64_t> builtinStepWorkspaces(const plan::Plan& plan);

}  // namespace kiln
