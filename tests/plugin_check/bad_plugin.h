// A deliberately broken plugin for the harness's own tests: "PluginCheckBad" version 1, one input,
// y = x + 1 (fp32, linear), with one defect chosen by the string field `mode`:
//   "none"        no defect (the control)
//   "round_trip"  serialize() of a deserialized object differs from the bytes it came from
//   "contexts"    enqueue() adds a process-wide counter, so contexts and runs disagree
//   "wrong_value" computes x + 1.5 (disagrees with a reference of x + 1)
#pragma once

#include "kiln/plugin.h"

namespace kiln::testing {

IPluginCreator& badPluginCreator();

}  // namespace kiln::testing
