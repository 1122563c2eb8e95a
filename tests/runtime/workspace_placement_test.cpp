// A static plan's step workspaces in its activation arena (runtime/workspace_placement.h): each in
// a hole of the tensors live at its step, aligned, past the arena's end only where no hole fits;
// and an engine's context memory is then the grown arena plus the plugins' own workspace.
#include "runtime/workspace_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/demo_plan_test_util.h"

namespace kiln::testing {
namespace {

// An FP32 activation of `floats` elements at `offset`.
int32_t activation(plan::Plan& p, int64_t floats, uint64_t offset) {
  plan::Tensor t;
  t.name = "t" + std::to_string(p.tensors.size());
  t.dims.nbDims = 1;
  t.dims.d[0] = floats;
  t.type = DataType::kFLOAT;
  t.kind = plan::TensorKind::kACTIVATION;
  t.arenaOffset = offset;
  p.tensors.push_back(t);
  return static_cast<int32_t>(p.tensors.size()) - 1;
}

void step(plan::Plan& p, std::vector<int32_t> in, std::vector<int32_t> out) {
  plan::Step s;
  s.layerName = "s" + std::to_string(p.steps.size());
  s.inputs = std::move(in);
  s.outputs = std::move(out);
  p.steps.push_back(s);
}

TEST(WorkspacePlacement, TakesHolesOfTheTensorsLiveAtItsStepOrGrowsTheArena) {
  plan::Plan p;
  p.arenaBytes = 4096;
  const int32_t a = activation(p, 250, 0);     // [0, 1000): steps 0-1
  const int32_t b = activation(p, 256, 1024);  // [1024, 2048): steps 1-2
  const int32_t c = activation(p, 512, 2048);  // [2048, 4096): steps 2-3
  step(p, {}, {a});
  step(p, {a}, {b});
  step(p, {b}, {c});
  step(p, {c}, {});
  step(p, {}, {});
  const WorkspacePlacement w = placeWorkspacesInArena(p, {512, 1024, 2048, 100, 5000});
  ASSERT_EQ(w.offsets.size(), 5u);
  EXPECT_EQ(w.offsets[0], 1024u);  // after a, at the next 256-byte boundary
  EXPECT_EQ(w.offsets[1], 2048u);  // after a and b
  EXPECT_EQ(w.offsets[2], 4096u);  // [0, 1024) is too small: past the end
  EXPECT_EQ(w.offsets[3], 0u);     // a and b are dead by then
  EXPECT_EQ(w.offsets[4], 0u);     // nothing is live
  EXPECT_EQ(w.arenaBytes, 4096u + 2048u);
  for (uint64_t o : w.offsets) EXPECT_EQ(o % kWorkspaceAlignment, 0u);
}

TEST(WorkspacePlacement, StepsWithoutWorkspaceLeaveTheArenaAsPlanned) {
  plan::Plan p;
  p.arenaBytes = 1024;
  const int32_t a = activation(p, 256, 0);
  step(p, {}, {a});
  step(p, {a}, {});
  const WorkspacePlacement w = placeWorkspacesInArena(p, {0, 0});
  EXPECT_EQ(w.arenaBytes, 1024u);
}

// The demo detector on the CPU, its convolutions' im2col workspaces placed at load: a context holds
// exactly the grown arena plus the plugin's own workspace, never more than the arena and the
// largest workspace side by side.
TEST(WorkspacePlacement, DemoContextHoldsTheGrownArenaAndThePluginsWorkspace) {
  const std::vector<uint8_t>& bytes = demoPlan();
  ASSERT_FALSE(bytes.empty());
  plan::Plan p;
  ASSERT_TRUE(plan::readPlan(bytes.data(), bytes.size(), p).isOk());
  std::vector<uint64_t> builtin(p.steps.size(), 0);
  uint64_t plugins = 0, largest = 0;
  for (size_t s = 0; s < p.steps.size(); ++s) {
    largest = std::max(largest, p.steps[s].workspaceBytes);
    if (p.steps[s].type == LayerType::kPLUGIN)
      plugins = std::max(plugins, p.steps[s].workspaceBytes);
    else
      builtin[s] = p.steps[s].workspaceBytes;
  }
  ASSERT_GT(largest, 0u);
  std::unique_ptr<IEngine> engine;
  ASSERT_TRUE(createRuntime()->deserializeEngine(bytes.data(), bytes.size(), engine).isOk());
  const uint64_t context = engine->getMemory().contextBytes;
  EXPECT_EQ(context, placeWorkspacesInArena(p, builtin).arenaBytes + plugins);
  EXPECT_LE(context, p.arenaBytes + largest);
}

}  // namespace
}  // namespace kiln::testing
