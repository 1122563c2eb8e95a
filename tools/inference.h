// Running a plan from the command line: host buffers in, N contexts on N threads, outputs that
// must agree bit for bit between contexts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli_common.h"
#include "kiln/runtime.h"

namespace kiln::cli {

struct HostTensor {
  std::string name;
  PluginTensorDesc desc;
  std::vector<uint8_t> data;
  bool dynamic = false;  // an input with a dynamic dim: desc.dims is the run-time shape set
};

// One shape per input name (--shapes NAME:DIMS).
using InputShapes = std::map<std::string, Dims>;

// The plan a command runs: `PLAN` (one positional), or `--onnx MODEL` parsed and built in memory
// with --device and --fp16, which apply only there (a plan runs where it was built for).
// `usage` is the error for a wrong number of positionals; `source` names the plan in messages.
// A model with symbolic input dims is built for --shapes, and for the shapes of `given` inputs
// (kiln run --input), as onnxruntime runs a model at the shapes it is handed.
// The values of `given`'s INT32/INT64 inputs: for those the model reads as shape operands, a
// model is built for them (shape-value inputs, OnnxParserOptions::shapeValues).
Status planFromArgs(const Args& args, const std::string& usage, std::vector<uint8_t>& plan,
                    std::string& source, const std::map<std::string, Dims>& givenShapes = {},
                    const std::map<std::string, std::vector<int64_t>>& givenValues = {});
// The elements of each INT32/INT64 tensor in `given`, by name (the others are left out).
std::map<std::string, std::vector<int64_t>> integerValues(
    const std::map<std::string, HostTensor>& given);

// Random inputs (floats uniform in [-1, 1); integers 0; a shape-value input the values its plan
// was built for) for every engine input not in `given`;
// `given` inputs are checked against the engine's dims and converted from fp32 to fp16/bf16 where
// the engine wants those. A dynamic input takes the shape of its `given` file, else of
// `runShapes`, else profile 0's opt shape.
Status prepareInputs(const IEngine& engine, std::map<std::string, HostTensor> given, unsigned seed,
                     std::vector<HostTensor>& inputs, const InputShapes& runShapes = {});

// One execution context ready to enqueue: its own stream, and its own copies of the inputs and
// of (poisoned) outputs in the engine's device memory (host memory for CPU engines), bound.
struct BoundContext {
  std::unique_ptr<IExecutionContext> context;
  std::unique_ptr<IDeviceStream> stream;
  std::vector<std::unique_ptr<IDeviceBuffer>> in, out;
  // Shape-value inputs are read by the engine from host memory on every backend: their copies.
  std::vector<std::vector<uint8_t>> hostInputs;
  std::vector<HostTensor> outputs;  // host copies, filled by readOutputs()
};
Status bindContext(IEngine& engine, const std::vector<HostTensor>& inputs, BoundContext& bound);
// Copies the outputs back into bound.outputs (after the stream has finished).
Status readOutputs(const IEngine& engine, BoundContext& bound);

// Runs `iterations` inferences on each of `contexts` contexts, each on its own thread, all at
// once. `outputs` are context 0's; any difference from another context is an error.
// CUDA plans: each context runs on its own stream over device copies of the data; with
// `cudaGraph`, each context keeps CUDA graphs (IExecutionContext::setCudaGraphs): the second
// enqueue captures, the later ones replay; `graphStats` (if given) gets context 0's counts.
Status runContexts(IEngine& engine, const std::vector<HostTensor>& inputs, int contexts,
                   int iterations, std::vector<HostTensor>& outputs, bool cudaGraph = false,
                   CudaGraphStats* graphStats = nullptr);

// The values of an fp32/fp16/bf16 tensor as floats (for printing).
std::vector<float> asFloats(const HostTensor& t);

}  // namespace kiln::cli
