// Pieces of the plugin conformance harness shared by its source files (not public).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/plan.h"
#include "kiln/device.h"
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

// check_device.cpp. Runs `contexts` execution contexts of `engine` at once, each on its own
// thread and stream, `iterations` enqueues each; fills outputs[context][iteration][output].
Status runContexts(IEngine& engine, const std::vector<HostTensor>& inputs,
                   const std::vector<HostTensor>& outputShapes, int contexts, int iterations,
                   std::vector<RunOutputs>& outputs);
// Runs one execution context of `engine` through a list of input shapes in turn (inputs[k] and
// outputShapes[k] are the tensors of shape k), one enqueue each, setting the shapes before each:
// what a plan built with a profile sees from a user whose shapes change.
Status runShapes(IEngine& engine, const std::vector<std::vector<HostTensor>>& inputs,
                 const std::vector<std::vector<HostTensor>>& outputShapes,
                 std::vector<std::vector<std::vector<uint8_t>>>& outputs);
// Whether device `ordinal` of `kind` is there; false with `why` otherwise.
bool deviceAvailable(DeviceKind kind, int ordinal, std::string& why);
// Captures one enqueue of a fresh context in a graph, launches the graph, and returns its
// outputs (`graphOut`) and those of a direct enqueue on the same context (`directOut`).
// kUnsupported on devices without graphs (the CPU).
Status runGraph(IEngine& engine, const std::vector<HostTensor>& inputs,
                const std::vector<HostTensor>& outputShapes,
                std::vector<std::vector<uint8_t>>& directOut,
                std::vector<std::vector<uint8_t>>& graphOut);

}  // namespace kiln::check
