// Pieces of the plugin conformance harness shared by its source files (not public).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/plan.h"
#include "kiln/plugin_check.h"
#include "kiln/runtime.h"
#include "kiln/status.h"

namespace kiln::check {

// A host tensor in its declared type, linear layout.
struct HostTensor {
  std::string name;
  Dims dims;
  DataType type = DataType::kFLOAT;
  std::vector<uint8_t> bytes;
};

// Outputs of one context: [iteration][output] bytes.
using RunOutputs = std::vector<std::vector<std::vector<uint8_t>>>;

// Runs `contexts` execution contexts of `engine` at once, each on its own thread (and, on CUDA,
// its own stream), `iterations` enqueues each; fills outputs[context][iteration][output].
Status runContextsCpu(IEngine& engine, const std::vector<HostTensor>& inputs,
                      const std::vector<HostTensor>& outputShapes, int contexts, int iterations,
                      std::vector<RunOutputs>& outputs);

// CUDA (check_cuda.cpp). cudaAvailable() is false (with `why`) without CUDA support or a GPU.
bool cudaAvailable(int device, std::string& why);
Status runContextsCuda(int device, IEngine& engine, const std::vector<HostTensor>& inputs,
                       const std::vector<HostTensor>& outputShapes, int contexts, int iterations,
                       std::vector<RunOutputs>& outputs);
// Captures one enqueue of a fresh context in a CUDA graph, launches the graph, and returns its
// outputs (`graphOut`) and those of a direct enqueue on the same context (`directOut`).
Status runCudaGraph(int device, IEngine& engine, const std::vector<HostTensor>& inputs,
                    const std::vector<HostTensor>& outputShapes,
                    std::vector<std::vector<uint8_t>>& directOut,
                    std::vector<std::vector<uint8_t>>& graphOut);

}  // namespace kiln::check
