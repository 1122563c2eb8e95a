// How the CUDA backend implements a built-in layer. The same shape as the CPU backend
// (backends/cpu/kernel.h): per layer type an ordered list of tactics, library-backed and tuned
// ones first, kiln's own plain kernel (the reference) last; each tactic makes a kernel for a
// configuration or says why not.
//
// This header includes no CUDA header, so the runtime and builder compile without the toolkit's
// headers; streams and handles travel as void*.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "backends/kernel_config.h"
#include "kiln/status.h"

namespace kiln::cuda {

class LibraryHandles;

// Where and how one run() happens.
struct RunContext {
  void* stream = nullptr;               // cudaStream_t
  LibraryHandles* libraries = nullptr;  // the execution context's cuBLAS/cuDNN handles
  // Host emulation, for tests without a GPU: every pointer is host memory and a kernel written
  // as a per-element function runs that function on the CPU over the whole index space. Kernels
  // that cannot (library calls, tuned kernels) return kUnsupported.
  bool emulate = false;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Device scratch bytes run() needs; the caller passes that much (256-byte aligned).
  virtual size_t workspaceSize() const { return 0; }
  // True when run() calls cuBLAS or cuDNN: the context then creates its handles up front, never
  // inside enqueue (which may be under CUDA graph capture).
  virtual bool usesLibraries() const { return false; }
  // Enqueues the layer on ctx.stream and returns without waiting. Must not allocate, free or
  // synchronize (so that a CUDA graph can capture it), and must be safe to call from several
  // contexts at once, each with its own buffers, stream and handles.
  virtual Status run(const void* const* inputs, void* const* outputs, void* workspace,
                     const RunContext& ctx) const = 0;
};

struct Tactic {
  const char* name;
  // A kernel for the configuration (descs have device kCUDA), or nullptr with *whyNot saying
  // why this tactic declines.
  std::unique_ptr<Kernel> (*create)(const KernelConfig& config, std::string* whyNot);
};

// The tactics for a layer type, reference last; empty for types the CUDA backend lacks.
std::span<const Tactic> tacticsFor(LayerType type);
const Tactic* findTactic(LayerType type, std::string_view name);

// The per-family lists behind tacticsFor (each defined beside its kernels); empty span for a
// type the family does not own.
std::span<const Tactic> dataMovementTactics(LayerType type);  // data_movement*.cu
std::span<const Tactic> mathTactics(LayerType type);          // math*.cu
std::span<const Tactic> denseTactics(LayerType type);         // dense*.cu / *.cpp

}  // namespace kiln::cuda
