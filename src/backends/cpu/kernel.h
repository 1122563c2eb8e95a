// What the CPU backend's kernels share: they run on the calling thread, before run() returns,
// and need nothing from the RunContext, so they implement the three-argument run().
#pragma once

#include <memory>
#include <utility>

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

// The kernel of a plain reference, whose run is a function of what its tactic read (the layer's
// geometry): kRun(geometry, inputs, outputs).
template <class Geometry, auto kRun>
class ReferenceKernel final : public Kernel {
 public:
  explicit ReferenceKernel(Geometry g) : g_(std::move(g)) {}
  Status run(const void* const* inputs, void* const* outputs, void*) const override {
    return kRun(g_, inputs, outputs);
  }

 private:
  Geometry g_;
};

template <auto kRun, class Geometry>
KernelPtr makeReferenceKernel(Geometry g) {
  return std::make_unique<ReferenceKernel<Geometry, kRun>>(std::move(g));
}

}  // namespace kiln::cpu
