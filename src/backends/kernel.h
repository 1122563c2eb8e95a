// How any backend implements a built-in op: for each op, an ordered list of tactics (oneDNN style:
// library-backed and tuned ones first, the plain reference last). A tactic either makes a kernel
// for one configuration or says why it cannot; the builder times those that can and the plan
// records the fastest by name.
//
// This header includes no CUDA header, so everything above the backends compiles without the
// toolkit; streams and library handles travel as opaque pointers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/layer_params.h"
#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln {

namespace cuda {
class LibraryHandles;  // backends/cuda/library_handles.h
}

// What a tactic may look at to decide whether it can run a layer and to prepare a kernel for it.
// One configuration (and one timing-cache key) describes a step on any backend.
struct KernelConfig {
  LayerType type = LayerType::kCONSTANT;
  LayerParams params;
  std::vector<PluginTensorDesc> inputs;
  std::vector<PluginTensorDesc> outputs;
  // Per input: the bytes when the input is a constant (weights; linear format, inputs[i].type),
  // else nullptr. Always host memory, also on CUDA (where run() gets the device copy as the input
  // pointer). A kernel may read or prepack them at creation; they outlive the kernel.
  std::vector<const void*> constantInputs;
};

// Where and how one run() happens. The CPU backend needs none of it.
struct RunContext {
  void* stream = nullptr;                     // CUDA: the cudaStream_t
  cuda::LibraryHandles* libraries = nullptr;  // CUDA: the context's cuBLAS/cuDNN handles
  // Host emulation of CUDA kernels, for tests without a GPU: every pointer is host memory and a
  // kernel written as a per-element function runs that function on the CPU over its whole index
  // space. Kernels that cannot (library calls, tuned kernels) return kUnsupported.
  bool emulate = false;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Scratch bytes run() needs; the caller passes that much (256-byte aligned) as `workspace`.
  virtual size_t workspaceSize() const { return 0; }
  // True when run() calls cuBLAS or cuDNN: the context then creates its handles up front, never
  // inside enqueue (which may be under CUDA graph capture).
  virtual bool usesLibraries() const { return false; }
  // Runs the layer: on the CPU before returning; on CUDA enqueued on ctx.stream without waiting,
  // allocating, freeing or synchronizing (so that a CUDA graph can capture it). Must be safe to
  // call from several contexts at once, each with its own buffers: all mutable state lives in the
  // buffers and the workspace.
  virtual Status run(const void* const* inputs, void* const* outputs, void* workspace,
                     const RunContext& ctx) const = 0;
};

using KernelPtr = std::unique_ptr<Kernel>;

struct Tactic {
  const char* name;
  // A kernel for the configuration, or nullptr with *whyNot saying why this tactic declines.
  KernelPtr (*create)(const KernelConfig& config, std::string* whyNot);
  // The kernels it makes read each element of the layer's residual input (ops::residualInput)
  // only where, and before, they write the same element of the output, and no other input
  // aliases it: so the output may be given the residual's memory when the residual is read by
  // nothing after this layer (the builder's in-place residuals, builder/in_place.h). cuBLASLt's
  // C == D, a per-element epilogue.
  bool residualInPlace = false;
};

}  // namespace kiln
