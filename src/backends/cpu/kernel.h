// What the CPU backend's kernels share: they run on the calling thread, before run() returns,
// and need nothing from the RunContext, so they implement the three-argument run().
#pragma once

#include "backends/kernel.h"

namespace kiln::cpu {

class Kernel : public kiln::Kernel {
 public:
  virtual Status run(const void* const* inputs, void* const* outputs, void* workspace) const = 0;
  Status run(const void* const* inputs, void* const* outputs, void* workspace,
             const RunContext&) const final {
    return run(inputs, outputs, workspace);
  }
};

}  // namespace kiln::cpu
