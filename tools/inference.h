// Running a plan from the command line: host buffers in, N contexts on N threads, outputs that
// must agree bit for bit between contexts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/runtime.h"

namespace kiln::cli {

struct HostTensor {
  std::string name;
  PluginTensorDesc desc;
  std::vector<uint8_t> data;
};

// Random inputs (floats uniform in [-1, 1); integers 0) for every engine input not in `given`;
// `given` inputs are checked against the engine's dims and converted from fp32 to fp16/bf16 where
// the engine wants those.
Status prepareInputs(const IEngine& engine, std::map<std::string, HostTensor> given, unsigned seed,
                     std::vector<HostTensor>& inputs);

// Runs `iterations` inferences on each of `contexts` contexts, each on its own thread, all at
// once. `outputs` are context 0's; any difference from another context is an error.
// CUDA plans: each context runs on its own stream over device copies of the data; with
// `cudaGraph`, each context's enqueue is captured once in a CUDA graph and the graph replayed.
Status runContexts(IEngine& engine, const std::vector<HostTensor>& inputs, int contexts,
                   int iterations, std::vector<HostTensor>& outputs, bool cudaGraph = false);

// The values of an fp32/fp16/bf16 tensor as floats (for printing).
std::vector<float> asFloats(const HostTensor& t);

}  // namespace kiln::cli
